package io.switchml.controller;

import io.grpc.Context;

import java.net.InetAddress;

/**
 * Who made the current Controller call, as {@link ControllerAuthenticator} found out: whether it
 * presented the operator's token, the digest of the job secret it presented (null: none), the
 * address it connected from (null on a transport without one), and the tenant whose share of the
 * switch its jobs use ({@link #tenantOf}).
 */
record Caller(boolean operator, byte[] jobSecretDigest, InetAddress peer, String tenant, boolean localOperator) {
    /** Outside any call (tests that call the registry directly): no credentials, no address. */
    static final Caller ANONYMOUS = new Caller(false, null, null, null, false);

    /** The tenant of local callers whose user the kernel's socket table did not show: the smallest share. */
    static final String UNKNOWN_LOCAL = "unknown local";

    Caller(boolean operator, byte[] jobSecretDigest, InetAddress peer, String tenant) {
        this(operator, jobSecretDigest, peer, tenant, false);
    }

    /**
     * A caller's tenant (docs/security.md, "Fair shares" and "Local users are tenants"): the subject of its
     * client certificate where mutual TLS gave one; for a caller on the switch's own host, its user as the
     * kernel says ({@code localUid}, "uid 1001 (alice)"), or {@link #UNKNOWN_LOCAL} where the kernel's table
     * did not show it (every such caller one tenant, whatever loopback address it uses); else its address;
     * null without any.
     *
     * @param localUid the uid owning the caller's socket ({@link LocalUserFilter}); null: not looked up (a
     *                 caller from another host), {@link LocalUsers#UNKNOWN}: not found
     */
    static String tenantOf(String certificateSubject, InetAddress peer, Integer localUid) {
        if (certificateSubject != null) {
            return "certificate " + certificateSubject;
        }
        if (peer == null) {
            return null;
        }
        if (localUid != null || peer.isLoopbackAddress()) {
            return localUid == null || localUid == LocalUsers.UNKNOWN ? UNKNOWN_LOCAL : LocalUsers.tenant(localUid);
        }
        return peer.getHostAddress();
    }

    /**
     * Whether this caller may end any job or SwitchML session ({@code switchml ctl end-session}): the operator's
     * token, or, on the switch's own host, the switch's own user or root by the kernel's word.
     */
    boolean mayEndAnyJob() {
        return operator || localOperator;
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
                + ", peer=" + peer + ", tenant=" + tenant + ", localOperator=" + localOperator + "}";
    }
}
