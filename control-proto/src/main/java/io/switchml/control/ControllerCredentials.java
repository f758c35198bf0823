package io.switchml.control;

import io.grpc.ChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.TlsChannelCredentials;
import io.grpc.stub.MetadataUtils;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * How a client proves itself to a controller: TLS (trusting a CA, optionally presenting its own
 * certificate for mutual TLS), the operator's token and the job's secret, each optional. The
 * secrets travel as gRPC metadata ({@code authorization: Bearer ...}, {@code switchml-job-secret})
 * and are never shown by {@link #toString()}.
 *
 * @param tlsCa         the CA to trust for the controller's certificate; null: plaintext
 * @param tlsCert       the certificate to present (mutual TLS); null: none
 * @param tlsKey        the PKCS#8 key of {@code tlsCert}
 * @param operatorToken null: none
 * @param jobSecret     null: none
 */
public record ControllerCredentials(Path tlsCa, Path tlsCert, Path tlsKey, String operatorToken, String jobSecret) {
    public static final ControllerCredentials NONE = new ControllerCredentials(null, null, null, null, null);
    static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    static final Metadata.Key<String> JOB_SECRET = Metadata.Key.of("switchml-job-secret", Metadata.ASCII_STRING_MARSHALLER);

    public ControllerCredentials {
        if ((tlsCert == null) != (tlsKey == null)) {
            throw new IllegalArgumentException("a TLS client certificate needs its key, and the reverse");
        }
    }

    /** A channel builder to the controller at {@code address}, with these credentials on every call. */
    public ManagedChannelBuilder<?> channelBuilder(ControllerAddress address) {
        // Plaintext to a switch of this host: its Unix-domain socket where it has one, so that it knows our user
        // from the kernel (docs/security.md, "Local users are tenants"); else TCP.
        ManagedChannelBuilder<?> local = tlsCa == null && tlsCert == null
                ? ControlSockets.builder(address.host(), address.port()) : null;
        ManagedChannelBuilder<?> builder = local != null ? local
                : Grpc.newChannelBuilderForAddress(address.host(), address.port(), channel());
        Metadata headers = new Metadata();
        if (operatorToken != null) {
            headers.put(AUTHORIZATION, "Bearer " + operatorToken);
        }
        if (jobSecret != null) {
            headers.put(JOB_SECRET, jobSecret);
        }
        return headers.keys().isEmpty() ? builder : builder.intercept(MetadataUtils.newAttachHeadersInterceptor(headers));
    }

    private ChannelCredentials channel() {
        if (tlsCa == null && tlsCert == null) {
            return InsecureChannelCredentials.create();
        }
        try {
            TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder();
            if (tlsCa != null) {
                tls.trustManager(tlsCa.toFile());
            }
            if (tlsCert != null) {
                tls.keyManager(tlsCert.toFile(), tlsKey.toFile());
            }
            return tls.build();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the TLS files (" + tlsCa + ", " + tlsCert + ", " + tlsKey + "): "
                    + e.getMessage(), e);
        }
    }

    @Override
    public String toString() {
        return "ControllerCredentials{tlsCa=" + tlsCa + ", tlsCert=" + tlsCert + ", operatorToken="
                + (operatorToken != null ? "(set)" : "none") + ", jobSecret=" + (jobSecret != null ? "(set)" : "none") + "}";
    }
}
