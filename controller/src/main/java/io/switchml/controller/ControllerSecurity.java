package io.switchml.controller;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;

/**
 * How the controller protects itself and its tenants: TLS (optionally mutual), the operator's token,
 * whether every job must carry a secret, who may open SwitchML sessions, and the limits that keep a
 * flood of requests from growing the controller's state. Fluent setters, validated when called; the
 * defaults (no TLS, no tokens, SwitchML sessions on) suit a switch on loopback.
 */
public final class ControllerSecurity {
    /** Ranks waiting to join, all jobs and peers together. */
    /** A tenant's share of the pool and the job table unless the operator says otherwise. */
    public static final double DEFAULT_TENANT_SHARE = 0.5;
    public static final int DEFAULT_MAX_PENDING_JOINS = 4096;
    /** Ranks waiting to join from one peer address: a host of 256 ranks of four jobs fits. */
    public static final int DEFAULT_MAX_PENDING_JOINS_PER_PEER = 1024;
    /** Join requests one peer address may make per second, sustained. */
    public static final int DEFAULT_JOINS_PER_SECOND_PER_PEER = 200;
    /** Join requests one peer address may make at once after being quiet. */
    public static final int DEFAULT_JOIN_BURST_PER_PEER = 1024;
    /** Barrier or broadcast calls of one job waiting at once (distinct sequence numbers). */
    public static final int DEFAULT_MAX_MEETINGS_PER_JOB = 1024;
    /**
     * The longest a join waits for its job's other ranks, whatever timeout it asks for: a waiting join
     * holds a place in the per-peer and global caps, so a flood of them must not hold those for an hour.
     */
    public static final int DEFAULT_MAX_JOIN_WAIT_MS = 600_000;
    /**
     * A job of which no rank made a call and no packet reached the switch for this long is reclaimed.
     * A live worker reports its transport every second; SwitchML's workers send packets.
     */
    public static final int DEFAULT_JOB_IDLE_TIMEOUT_MS = 600_000;
    /** Threads that run the controller's calls; waiting calls (joins, barriers) hold none. */
    public static final int DEFAULT_CALL_THREADS = 16;
    /**
     * Health Watch streams open at once, all callers together: a few orchestrators and load balancers
     * watch one each; a stream holds about 6 KB, so the cap bounds them to a few MB.
     */
    public static final int DEFAULT_MAX_HEALTH_WATCHES = 1024;

    private Path tlsCertificate;
    private Path tlsKey;
    private Path tlsClientCa;
    private byte[] operatorTokenDigest;
    private boolean requireJobSecrets;
    private NetworkPolicy switchmlSessions = NetworkPolicy.ON;
    /** Where the issued secrets' digests outlive a restart; null: they live in memory only. */
    private java.nio.file.Path issuedSecretsFile;
    /** Null: this host only when the switch has no credentials, everyone when it has (protected mode). */
    private NetworkPolicy trustedNetworks;
    private int maxPendingJoins = DEFAULT_MAX_PENDING_JOINS;
    private int maxPendingJoinsPerPeer = DEFAULT_MAX_PENDING_JOINS_PER_PEER;
    private int joinsPerSecondPerPeer = DEFAULT_JOINS_PER_SECOND_PER_PEER;
    private int joinBurstPerPeer = DEFAULT_JOIN_BURST_PER_PEER;
    private int maxMeetingsPerJob = DEFAULT_MAX_MEETINGS_PER_JOB;
    private int maxJoinWaitMs = DEFAULT_MAX_JOIN_WAIT_MS;
    private int callThreads = DEFAULT_CALL_THREADS;
    private int maxHealthWatches = DEFAULT_MAX_HEALTH_WATCHES;
    private int jobIdleTimeoutMs = DEFAULT_JOB_IDLE_TIMEOUT_MS;
    private long tenantQuotaBytes = Long.MAX_VALUE;
    private double tenantShare = DEFAULT_TENANT_SHARE;
    private boolean localOperators = true;

    /**
     * Whether the switch's own user and root, calling from the switch's host (the kernel's socket table says
     * whose the caller's socket is), may end any job or SwitchML session without the operator's token, as
     * they could end the switch itself (docs/security.md, "Local users are tenants"). Their own jobs still
     * count against their uid's share. Default true.
     */
    public ControllerSecurity localOperators(boolean allowed) {
        this.localOperators = allowed;
        return this;
    }

    public boolean localOperators() {
        return localOperators;
    }

    /** The defaults: plaintext, no tokens. */
    public ControllerSecurity() {
    }

    /** Serves TLS with this certificate chain and its private key (PEM; the key PKCS#8, as openssl genpkey writes it). */
    public ControllerSecurity tls(Path certificateChain, Path privateKey) {
        this.tlsCertificate = readable(certificateChain, "TLS certificate");
        this.tlsKey = readable(privateKey, "TLS private key");
        return this;
    }

    /** Mutual TLS: every client must present a certificate signed by one of these CAs (PEM). Needs {@link #tls}. */
    public ControllerSecurity tlsClientCa(Path caCertificates) {
        this.tlsClientCa = readable(caCertificates, "TLS client CA");
        return this;
    }

    /**
     * The operator's token: when set, Status, JobDetail, SetDropProbabilities and IssueJobSecret need it.
     * Only its digest is kept.
     */
    public ControllerSecurity operatorToken(String token) {
        this.operatorTokenDigest = Secrets.digest(Secrets.requireUsable(token, "operator token"));
        return this;
    }

    /** Whether a join that presents no job secret is refused. Default false. */
    public ControllerSecurity requireJobSecrets(boolean require) {
        this.requireJobSecrets = require;
        return this;
    }

    /** Who may use SwitchML's own session protocol, which carries no credentials. Default {@link NetworkPolicy#ON}. */
    public ControllerSecurity switchmlSessions(NetworkPolicy policy) {
        this.switchmlSessions = Objects.requireNonNull(policy, "policy");
        return this;
    }

    public ControllerSecurity maxPendingJoins(int joins) {
        this.maxPendingJoins = positive(joins, "maxPendingJoins");
        return this;
    }

    public ControllerSecurity maxPendingJoinsPerPeer(int joins) {
        this.maxPendingJoinsPerPeer = positive(joins, "maxPendingJoinsPerPeer");
        return this;
    }

    /** The per-peer token bucket of join requests: {@code perSecond} sustained, {@code burst} at once. */
    public ControllerSecurity joinRatePerPeer(int perSecond, int burst) {
        this.joinsPerSecondPerPeer = positive(perSecond, "joins per second");
        this.joinBurstPerPeer = positive(burst, "join burst");
        return this;
    }

    public ControllerSecurity maxMeetingsPerJob(int meetings) {
        this.maxMeetingsPerJob = positive(meetings, "maxMeetingsPerJob");
        return this;
    }

    /** The longest a join waits for the other ranks of its job, in milliseconds (its own timeout, if shorter). */
    public ControllerSecurity maxJoinWaitMs(int millis) {
        this.maxJoinWaitMs = positive(millis, "maxJoinWaitMs");
        return this;
    }

    /** Threads that run the controller's calls. */
    public ControllerSecurity callThreads(int threads) {
        this.callThreads = positive(threads, "callThreads");
        return this;
    }

    /** Health Watch streams (the standard gRPC health service's) open at once; beyond, RESOURCE_EXHAUSTED. */
    public ControllerSecurity maxHealthWatches(int streams) {
        this.maxHealthWatches = positive(streams, "maxHealthWatches");
        return this;
    }

    public int maxHealthWatches() {
        return maxHealthWatches;
    }

    /** How long a job (or SwitchML session) may go without a call or a packet of any rank before it is reclaimed. */
    public ControllerSecurity jobIdleTimeoutMs(int millis) {
        this.jobIdleTimeoutMs = positive(millis, "jobIdleTimeoutMs");
        return this;
    }

    /**
     * The most register memory (see {@code JobSpec.memoryBytes}) the running jobs of one tenant may hold
     * together, on top of its {@link #tenantShare}; a tenant is the certificate subject or the address of a
     * job's first join ({@code Caller.tenantOf}). Default: no limit beyond the share.
     */
    public ControllerSecurity tenantQuotaBytes(long bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("tenantQuotaBytes must be at least 1, not " + bytes);
        }
        this.tenantQuotaBytes = bytes;
        return this;
    }

    public long tenantQuotaBytes() {
        return tenantQuotaBytes;
    }

    /**
     * The share of the switch one tenant's jobs may hold (docs/security.md, "Fair shares"): of the pool's
     * slots and register bytes, and of the job table (running and forming jobs). The operator's jobs are not
     * counted. 1 turns the shares off. Default {@value #DEFAULT_TENANT_SHARE}: two tenants can fill the
     * switch, one cannot.
     */
    public ControllerSecurity tenantShare(double share) {
        if (!(share > 0 && share <= 1)) {
            throw new IllegalArgumentException("tenantShare must be in (0, 1], not " + share);
        }
        this.tenantShare = share;
        return this;
    }

    public double tenantShare() {
        return tenantShare;
    }

    public int jobIdleTimeoutMs() {
        return jobIdleTimeoutMs;
    }

    public int maxJoinWaitMs() {
        return maxJoinWaitMs;
    }

    public int callThreads() {
        return callThreads;
    }

    public boolean tlsEnabled() {
        return tlsCertificate != null;
    }

    public Path tlsCertificate() {
        return tlsCertificate;
    }

    public Path tlsKey() {
        return tlsKey;
    }

    /** Null without mutual TLS. */
    public Path tlsClientCa() {
        return tlsClientCa;
    }

    public boolean operatorTokenSet() {
        return operatorTokenDigest != null;
    }

    /** Null when no operator token is set. */
    byte[] operatorTokenDigest() {
        return operatorTokenDigest;
    }

    public boolean requireJobSecrets() {
        return requireJobSecrets;
    }

    /**
     * Who may make control-plane calls by address (docs/security.md, "Protected mode"): by default, a switch
     * without credentials (no operator token, no client CA) takes them from this host only, and one with
     * credentials from everyone; {@code on} trusts every network, a list of subnets those.
     */
    public ControllerSecurity trustedNetworks(NetworkPolicy policy) {
        this.trustedNetworks = policy;
        return this;
    }

    /** Whether an operator named networks to trust beyond this host. */
    public boolean trustsOtherNetworks() {
        return trustedNetworks != null && !trustedNetworks.off();
    }

    String trustedNetworksText() {
        return trustedNetworks == null ? "not given" : trustedNetworks.toString();
    }

    /**
     * A file that keeps the digests of the secrets the operator issues ({@code switchml ctl secret}), so that they
     * outlive a restart; read at start, rewritten at every issue. Default: none, they vanish with the switch.
     */
    public ControllerSecurity issuedSecretsFile(java.nio.file.Path file) {
        this.issuedSecretsFile = file;
        return this;
    }

    public java.nio.file.Path issuedSecretsFile() {
        return issuedSecretsFile;
    }

    /** Whether callers must prove who they are: an operator token or client certificates. */
    public boolean credentials() {
        return operatorTokenSet() || tlsClientCa() != null;
    }

    /** Whether control-plane calls from {@code peer} are taken ({@link #trustedNetworks(NetworkPolicy)}). */
    public boolean trusts(java.net.InetAddress peer) {
        if (trustedNetworks != null) {
            return trustedNetworks.allows(peer) || peer != null && peer.isLoopbackAddress();
        }
        return credentials() || peer != null && peer.isLoopbackAddress();
    }

    /** Who may make control-plane calls, as a start-up line says it. */
    public String describeTrust() {
        if (trustedNetworks != null) {
            return trustedNetworks.everyone() ? "control-plane calls from every network (--trusted-networks on)"
                    : "control-plane calls from this host and " + trustedNetworks + " (--trusted-networks)";
        }
        return credentials() ? "control-plane calls from every network, with credentials"
                : "protected mode: control-plane calls from this host only (no credentials; --trusted-networks to take"
                + " them from others)";
    }

    public NetworkPolicy switchmlSessions() {
        return switchmlSessions;
    }

    public int maxPendingJoins() {
        return maxPendingJoins;
    }

    public int maxPendingJoinsPerPeer() {
        return maxPendingJoinsPerPeer;
    }

    public int joinsPerSecondPerPeer() {
        return joinsPerSecondPerPeer;
    }

    public int joinBurstPerPeer() {
        return joinBurstPerPeer;
    }

    public int maxMeetingsPerJob() {
        return maxMeetingsPerJob;
    }

    /** The checks that involve more than one setting. */
    void validate() {
        if (tlsClientCa != null && tlsCertificate == null) {
            throw new IllegalArgumentException("a TLS client CA (mutual TLS) needs the server's own certificate and key"
                    + " (--tls-cert and --tls-key)");
        }
    }

    private static Path readable(Path path, String what) {
        Objects.requireNonNull(path, what);
        if (!Files.isReadable(path)) {
            throw new IllegalArgumentException(what + " " + path + " is not a readable file");
        }
        return path;
    }

    private static int positive(int value, String what) {
        if (value < 1) {
            throw new IllegalArgumentException(what + " must be at least 1, not " + value);
        }
        return value;
    }

    /** Never shows the token, only whether there is one. */
    @Override
    public String toString() {
        return "ControllerSecurity{tls=" + (tlsEnabled() ? tlsCertificate : "off") + ", mutualTls=" + (tlsClientCa != null)
                + ", operatorToken=" + (operatorTokenSet() ? "set" : "none") + ", requireJobSecrets=" + requireJobSecrets
                + ", switchmlSessions=" + switchmlSessions + ", maxPendingJoins=" + maxPendingJoins
                + ", maxPendingJoinsPerPeer=" + maxPendingJoinsPerPeer + ", joinsPerSecondPerPeer=" + joinsPerSecondPerPeer
                + ", joinBurstPerPeer=" + joinBurstPerPeer + ", maxMeetingsPerJob=" + maxMeetingsPerJob
                + ", maxJoinWaitMs=" + maxJoinWaitMs + ", callThreads=" + callThreads + ", maxHealthWatches="
                + maxHealthWatches + ", jobIdleTimeoutMs=" + jobIdleTimeoutMs + ", tenantQuotaBytes=" + tenantQuotaBytes
                + ", tenantShare=" + tenantShare + "}";
    }
}
