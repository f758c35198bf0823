package io.switchml.controller;

import io.grpc.Context;

import java.net.InetAddress;

/**
 * Who made the current Controller call, as {@link ControllerAuthenticator} found out: whether it
 * presented the operator's token, the digest of the job secret it presented (null: none), and the
 * address it connected from (null on a transport without one).
 */
record Caller(boolean operator, byte[] jobSecretDigest, InetAddress peer) {
    /** Outside any call (tests that call the registry directly): no credentials, no address. */
    static final Caller ANONYMOUS = new Caller(false, null, null);
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
