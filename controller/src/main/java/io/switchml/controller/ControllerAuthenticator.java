package io.switchml.controller;

import io.grpc.Context;
import io.grpc.Contexts;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import io.switchml.controller.proto.ControllerGrpc;

import java.net.InetAddress;
import java.security.cert.Certificate;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLPeerUnverifiedException;
import javax.net.ssl.SSLSession;
import java.net.InetSocketAddress;
import java.util.Set;

/**
 * Reads the credentials of every Controller call from its metadata and refuses, before the call
 * reaches the service, an operator call without the operator's token (when the switch has one) and
 * any call presenting a wrong one. Job secrets are checked by the {@link JobRegistry}, which knows
 * the jobs; this only digests what was presented ({@link Caller}).
 */
final class ControllerAuthenticator implements ServerInterceptor {
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> JOB_SECRET = Metadata.Key.of("switchml-job-secret", Metadata.ASCII_STRING_MARSHALLER);
    private static final String BEARER = "Bearer ";

    /** Inspection and administration: the operator's. */
    static final Set<String> OPERATOR_METHODS = Set.of(
            ControllerGrpc.getStatusMethod().getFullMethodName(),
            ControllerGrpc.getJobDetailMethod().getFullMethodName(),
            ControllerGrpc.getSetDropProbabilitiesMethod().getFullMethodName(),
            ControllerGrpc.getIssueJobSecretMethod().getFullMethodName());

    /** Null when the switch has no operator token. */
    private final byte[] operatorDigest;
    /** Whether the switch's own user and root, calling from its host, may end any job. */
    private final boolean localOperators;
    private final int self = LocalUsers.self();

    ControllerAuthenticator(byte[] operatorDigest) {
        this(operatorDigest, false);
    }

    ControllerAuthenticator(byte[] operatorDigest, boolean localOperators) {
        this.operatorDigest = operatorDigest;
        this.localOperators = localOperators;
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        String method = call.getMethodDescriptor().getFullMethodName();
        String authorization = headers.get(AUTHORIZATION);
        boolean operator = false;
        if (authorization != null && operatorDigest != null) {
            operator = authorization.startsWith(BEARER)
                    && Secrets.same(operatorDigest, Secrets.digest(authorization.substring(BEARER.length()).trim()));
            if (!operator) {
                return refuse(call, "the operator token presented is wrong; check --token-file (or SWITCHML_TOKEN)"
                        + " against the switch's --operator-token-file");
            }
        }
        if (operatorDigest != null && !operator && OPERATOR_METHODS.contains(method)) {
            return refuse(call, "this switch needs the operator token for " + method.substring(method.lastIndexOf('/') + 1)
                    + ": pass the file the switch was started with (--operator-token-file) as `switchml ctl --token-file FILE`,"
                    + " or set SWITCHML_TOKEN");
        }
        String secret = headers.get(JOB_SECRET);
        InetAddress address = ControlSocket.peerAddress(call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR));
        Integer uid = call.getAttributes().get(LocalUserFilter.UID);
        boolean localOperator = localOperators && uid != null && uid != LocalUsers.UNKNOWN && (uid == 0 || uid == self);
        Caller caller = new Caller(operator, secret == null ? null : Secrets.digest(secret), address,
                Caller.tenantOf(certificateSubject(call.getAttributes().get(Grpc.TRANSPORT_ATTR_SSL_SESSION)), address, uid),
                localOperator);
        return Contexts.interceptCall(Context.current().withValue(Caller.KEY, caller), call, headers, next);
    }

    /** The subject of the client's certificate, where mutual TLS asked for one; null otherwise. */
    private static String certificateSubject(SSLSession session) {
        if (session == null) {
            return null;
        }
        try {
            Certificate[] chain = session.getPeerCertificates();
            return chain.length > 0 && chain[0] instanceof X509Certificate x509
                    ? x509.getSubjectX500Principal().getName() : null;
        } catch (SSLPeerUnverifiedException e) {
            return null; // TLS without client certificates
        }
    }

    private static <Q, R> ServerCall.Listener<Q> refuse(ServerCall<Q, R> call, String why) {
        call.close(Status.UNAUTHENTICATED.withDescription(why), new Metadata());
        return new ServerCall.Listener<>() { };
    }
}
