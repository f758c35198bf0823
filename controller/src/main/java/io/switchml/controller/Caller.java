package io.switchml.controller;

import io.grpc.Context;

import java.net.InetAddress;

/**
 * Who made the current Controller call, as {@link ControllerAuthenticator} found out: whether it
 * presented the operator's token, the digest of the job secret it presented (null: none), the
 * address it connected from (null on a transport without one), and the tenant whose share of the
 * switch its jobs use ({@link #tenantOf}).
 */
record Caller(boolean operator, byte[] jobSecretDigest, InetAddress peer, String tenant) {
    /** Outside any call (tests that call the registry directly): no credentials, no address. */
    static final Caller ANONYMOUS = new Caller(false, null, null, null);

    /**
     * A caller's tenant (docs/security.md, "Fair shares"): the subject of its client certificate where
     * mutual TLS gave one, else its address, every loopback address one tenant ("loopback": the users of
     * one host cannot take more by connecting from 127.0.0.2, 127.0.0.3...); null without either.
     */
    static String tenantOf(String certificateSubject, InetAddress peer) {
        if (certificateSubject != null) {
            return "certificate " + certificateSubject;
        }
        return peer == null ? null : peer.isLoopbackAddress() ? "loopback" : peer.getHostAddress();
    }
    static final Context.Key<Caller> KEY = Context.key("switchml-caller");

    /** The current call's caller, or {@link #ANONYMOUS}. */
    static Caller current() {
        Caller caller = KEY.get();
        return caller == null ? ANONYMOUS : caller;
    }

    /** Whether this caller may act on a job protected by {@code jobDigest} (null: the job has no secret). */
    boolean mayUse(byte[] jobDigest) {
        return operator || Secrets.same(jobDigest, jobSecretDigest);
    }

    /** Never shows the secret. */
    @Override
    public String toString() {
        return "Caller{operator=" + operator + ", jobSecret=" + (jobSecretDigest != null ? "presented" : "none")
                + ", peer=" + peer + "}";
    }
}
