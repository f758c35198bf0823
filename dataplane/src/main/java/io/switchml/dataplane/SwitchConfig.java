package io.switchml.dataplane;

import io.switchml.ipc.IpcPoller;
import io.switchml.protocol.ProtocolConstants;
import io.switchml.udp.Offload;
import java.util.Objects;

/**
 * How to start an {@link AggregationSwitch}. Fluent setters, each validated when called; the
 * getters of the same names read the values back. {@link AggregationSwitch#start} copies the
 * config, so changing it afterwards does not affect a running switch.
 *
 * <pre>{@code
 * AggregationSwitch.start(new SwitchConfig().basePort(0).portCount(2));
 * }</pre>
 */
public final class SwitchConfig {
    public static final String DEFAULT_BIND_ADDRESS = "0.0.0.0";
    public static final int DEFAULT_BASE_PORT = ProtocolConstants.SWITCH_UDP_PORT;
    public static final int DEFAULT_PORT_COUNT = 1;
    /** SwitchML's port range 0xBEE0..0xBEEF has 16 ports. */
    public static final int MAX_PORT_COUNT = ProtocolConstants.SWITCH_UDP_PORT_COUNT;
    public static final long DEFAULT_DROP_SEED = 0L;
    /**
     * Aggregator slots of all jobs together: four jobs of the largest window pool_index can address
     * (2^14), or 1024 jobs of the workers' default 64. A slot of k-element packets takes about
     * 8k bytes of registers (two copies of k int32), so a full pool of 256-element slots is 128 MiB.
     */
    public static final int DEFAULT_POOL_SLOTS = 1 << 16;
    /**
     * One-round staging one job may hold (docs/ARCHITECTURE.md section 8): 64 MiB, about n = 8
     * workers x 64 slots x 8 KiB at MTU 9000 sixteen times over; 4 workers on loopback need 1.9 MiB.
     */
    public static final long DEFAULT_ONE_ROUND_STAGING_BYTES = 64L << 20;
    /** The most one-round staging one job may be given: 4 GiB. */
    public static final long MAX_ONE_ROUND_STAGING_BYTES = 4L << 30;
    /** The largest pool: 2^24 slots. */
    public static final int MAX_POOL_SLOTS = 1 << 24;

    private String bindAddress = DEFAULT_BIND_ADDRESS;
    private int basePort = DEFAULT_BASE_PORT;
    private int portCount = DEFAULT_PORT_COUNT;
    private double ingressDropProbability;
    private double egressDropProbability;
    private long dropSeed = DEFAULT_DROP_SEED;
    private boolean nativeTransport = true;
    private Offload udpSegmentation = Offload.AUTO;
    private Offload udpGro = Offload.AUTO;
    private boolean allowFaultInjection;
    /** Where the shared-memory port's directory is made; null: no shared-memory port. */
    private String ipcBase = IpcDirectory.defaultBase();
    /** Negative: the host's default ({@code IpcPoller.defaultSpinNanos}). */
    private long ipcSpinMicros = -1;
    private int poolSlots = DEFAULT_POOL_SLOTS;
    /** 0: the whole pool. */
    private int jobQuotaSlots;
    private long oneRoundStagingBytes = DEFAULT_ONE_ROUND_STAGING_BYTES;
    private long poolBytes = defaultPoolBytes();

    /** A config with every default. */
    public SwitchConfig() {
    }

    /**
     * IPv4 address (name or literal) the switch ports bind to. Default {@value #DEFAULT_BIND_ADDRESS}:
     * every interface. IPv4 only: the worker table identifies workers by IPv4 address.
     */
    public SwitchConfig bindAddress(String bindAddress) {
        if (bindAddress == null || bindAddress.isBlank()) {
            throw new IllegalArgumentException("bind address is empty");
        }
        this.bindAddress = bindAddress;
        return this;
    }

    public String bindAddress() {
        return bindAddress;
    }

    /**
     * First UDP port; the switch binds {@code basePort .. basePort + portCount - 1}. Default 48864
     * (0xBEE0, SwitchML's). 0 binds {@code portCount} free ephemeral ports instead (for tests).
     */
    public SwitchConfig basePort(int basePort) {
        if (basePort < 0 || basePort > 65535) {
            throw new IllegalArgumentException("base port " + basePort + " is outside 0..65535");
        }
        this.basePort = basePort;
        return this;
    }

    public int basePort() {
        return basePort;
    }

    /**
     * Number of UDP ports, each with its own receive thread, 1..{@value #MAX_PORT_COUNT}. Default 1.
     * Slots of worker thread t must arrive on port {@code t % portCount}.
     */
    public SwitchConfig portCount(int portCount) {
        if (portCount < 1 || portCount > MAX_PORT_COUNT) {
            throw new IllegalArgumentException("port count " + portCount + " is outside 1.." + MAX_PORT_COUNT);
        }
        this.portCount = portCount;
        return this;
    }

    public int portCount() {
        return portCount;
    }

    /** Probability that the drop simulator drops a packet on arrival, in [0, 1]. Default 0. */
    public SwitchConfig ingressDropProbability(double probability) {
        DropProbabilities.check("ingress", probability);
        this.ingressDropProbability = probability;
        return this;
    }

    public double ingressDropProbability() {
        return ingressDropProbability;
    }

    /** Probability that the drop simulator drops each result datagram before it leaves, in [0, 1]. Default 0. */
    public SwitchConfig egressDropProbability(double probability) {
        DropProbabilities.check("egress", probability);
        this.egressDropProbability = probability;
        return this;
    }

    public double egressDropProbability() {
        return egressDropProbability;
    }

    /**
     * Whether the drop simulator may drop anything: drop probabilities above 0, at start or later
     * through {@link AggregationSwitch#setDropProbabilities}. Default false: a production switch
     * never drops packets on request, whoever asks.
     */
    public SwitchConfig allowFaultInjection(boolean allow) {
        this.allowFaultInjection = allow;
        return this;
    }

    public boolean allowFaultInjection() {
        return allowFaultInjection;
    }

    /** Seed of the drop simulator; port i uses {@code dropSeed + i}. Default 0. */
    public SwitchConfig dropSeed(long dropSeed) {
        this.dropSeed = dropSeed;
        return this;
    }

    public long dropSeed() {
        return dropSeed;
    }

    /** Use Netty's native epoll transport when it is available (else NIO). Default true. */
    /**
     * The directory under which the switch makes its shared-memory port's own directory (mode 0700),
     * for workers on this host (docs/ARCHITECTURE.md section 11); null turns the port off. Default:
     * /dev/shm where it exists, else the temporary directory.
     */
    public SwitchConfig ipcBase(String base) {
        this.ipcBase = base;
        return this;
    }

    public String ipcBase() {
        return ipcBase;
    }

    /**
     * How long the shared-memory port's reader polls after work before it sleeps until a doorbell, in
     * microseconds; 0 never spins. Default: 50 on a host with 4 cores or more, else 0.
     */
    public SwitchConfig ipcSpinMicros(long micros) {
        if (micros < 0) {
            throw new IllegalArgumentException("ipc spin " + micros + " µs must be at least 0");
        }
        this.ipcSpinMicros = micros;
        return this;
    }

    /** The reader's spin in nanoseconds: the one set, or the host's default. */
    public long ipcSpinNanos() {
        return ipcSpinMicros < 0 ? IpcPoller.defaultSpinNanos() : java.util.concurrent.TimeUnit.MICROSECONDS.toNanos(ipcSpinMicros);
    }

    public SwitchConfig nativeTransport(boolean nativeTransport) {
        this.nativeTransport = nativeTransport;
        return this;
    }

    public boolean nativeTransport() {
        return nativeTransport;
    }

    /**
     * Whether a port sends the results one read completed for one worker as one segmented datagram (UDP GSO,
     * docs/ARCHITECTURE.md section 17): auto (the default) where the epoll transport and kernel have it, on
     * (required: the switch does not start without it), off. A port whose segmented send the kernel refuses falls
     * back to one datagram per result and counts it in {@code udp_segmentation_off}.
     */
    public SwitchConfig udpSegmentation(Offload offload) {
        this.udpSegmentation = Objects.requireNonNull(offload, "udpSegmentation");
        return this;
    }

    public Offload udpSegmentation() {
        return udpSegmentation;
    }

    /**
     * Whether a port receives with UDP GRO, taking a run of one worker's packets as one datagram that it splits into
     * its packets (docs/ARCHITECTURE.md section 17): auto (the default) where the kernel grants it, on (required),
     * off. A port that asked with auto and was refused counts it in {@code udp_gro_off}.
     */
    public SwitchConfig udpGro(Offload offload) {
        this.udpGro = Objects.requireNonNull(offload, "udpGro");
        return this;
    }

    public Offload udpGro() {
        return udpGro;
    }

    /**
     * Aggregator slots the switch gives out to all jobs together, 1..{@value #MAX_POOL_SLOTS}.
     * Default {@value #DEFAULT_POOL_SLOTS}. A job holds threads x slotsPerThread slots (its window)
     * from its installation to its end; the controller's admission control gives a job that does
     * not fit a smaller window, or refuses it.
     */
    public SwitchConfig poolSlots(int poolSlots) {
        if (poolSlots < 1 || poolSlots > MAX_POOL_SLOTS) {
            throw new IllegalArgumentException("pool slots " + poolSlots + " is outside 1.." + MAX_POOL_SLOTS);
        }
        this.poolSlots = poolSlots;
        return this;
    }

    public int poolSlots() {
        return poolSlots;
    }

    /**
     * The default register memory of all jobs together: half of the JVM's heap limit, so that jobs asking
     * for large packets and many slots are refused with a clear error instead of exhausting the heap.
     */
    public static long defaultPoolBytes() {
        return Runtime.getRuntime().maxMemory() / 2;
    }

    /**
     * Register memory, in bytes, of all jobs together (slots x {@link JobSpec#slotBytes} plus one-round
     * staging); admission gives a job that does not fit a smaller window, or refuses it. Default: half
     * the heap limit ({@link #defaultPoolBytes()}).
     */
    public SwitchConfig poolBytes(long bytes) {
        if (bytes < 1) {
            throw new IllegalArgumentException("pool bytes " + bytes + " must be at least 1");
        }
        this.poolBytes = bytes;
        return this;
    }

    public long poolBytes() {
        return poolBytes;
    }

    /**
     * The most slots one job may hold, 1..{@link #poolSlots}; 0 (the default) means the whole pool.
     * Keeps one job from taking the pool from the others.
     */
    public SwitchConfig jobQuotaSlots(int jobQuotaSlots) {
        if (jobQuotaSlots < 0 || jobQuotaSlots > MAX_POOL_SLOTS) {
            throw new IllegalArgumentException("job quota " + jobQuotaSlots + " slots is outside 0.." + MAX_POOL_SLOTS
                    + " (0: the whole pool)");
        }
        this.jobQuotaSlots = jobQuotaSlots;
        return this;
    }

    /** The per-job quota in slots: the one set, or the pool size when none was. */
    public int jobQuotaSlots() {
        return jobQuotaSlots == 0 ? poolSlots : jobQuotaSlots;
    }

    /**
     * The most memory, in bytes, one job's one-round staging may take (n contributions of a slot's
     * values per slot); a job that asks for more runs without the one-round mode, its workers
     * falling back to the two-round protocol. 0 turns the mode off. Default 64 MiB.
     */
    public SwitchConfig oneRoundStagingBytes(long bytes) {
        if (bytes < 0 || bytes > MAX_ONE_ROUND_STAGING_BYTES) {
            throw new IllegalArgumentException("one-round staging " + bytes + " bytes is outside 0.."
                    + MAX_ONE_ROUND_STAGING_BYTES + " (0: no one-round mode)");
        }
        this.oneRoundStagingBytes = bytes;
        return this;
    }

    public long oneRoundStagingBytes() {
        return oneRoundStagingBytes;
    }

    /** The checks that involve more than one setting. */
    void validate() {
        if (basePort != 0 && basePort + portCount - 1 > 65535) {
            throw new IllegalArgumentException("ports " + basePort + ".." + (basePort + portCount - 1) + " exceed 65535");
        }
        if (!allowFaultInjection && (ingressDropProbability > 0 || egressDropProbability > 0)) {
            throw new IllegalArgumentException(FaultInjectionRefusedException.MESSAGE);
        }
        if (jobQuotaSlots > poolSlots) {
            throw new IllegalArgumentException("job quota " + jobQuotaSlots + " slots exceeds the pool of " + poolSlots
                    + " slots");
        }
    }

    SwitchConfig copy() {
        SwitchConfig copy = new SwitchConfig().bindAddress(bindAddress).basePort(basePort).portCount(portCount)
                .ingressDropProbability(ingressDropProbability).egressDropProbability(egressDropProbability)
                .dropSeed(dropSeed).nativeTransport(nativeTransport).poolSlots(poolSlots).jobQuotaSlots(jobQuotaSlots)
                .oneRoundStagingBytes(oneRoundStagingBytes).poolBytes(poolBytes).allowFaultInjection(allowFaultInjection).ipcBase(ipcBase)
                .udpSegmentation(udpSegmentation).udpGro(udpGro);
        if (ipcSpinMicros >= 0) {
            copy.ipcSpinMicros(ipcSpinMicros);
        }
        return copy;
    }

    @Override
    public String toString() {
        return "SwitchConfig{bindAddress=" + bindAddress + ", basePort=" + basePort + ", portCount=" + portCount
                + ", ingressDropProbability=" + ingressDropProbability + ", egressDropProbability="
                + egressDropProbability + ", dropSeed=" + dropSeed + ", nativeTransport=" + nativeTransport + ", poolSlots="
                + poolSlots + ", jobQuotaSlots=" + jobQuotaSlots() + ", poolBytes=" + poolBytes + ", oneRoundStagingBytes=" + oneRoundStagingBytes
                + ", allowFaultInjection=" + allowFaultInjection + ", ipcBase=" + ipcBase + ", udpSegmentation=" + udpSegmentation
                + ", udpGro=" + udpGro + "}";
    }
}
