package io.switchml.client;

import io.switchml.ipc.IpcPoller;
import io.switchml.api.SwitchUnavailableException;
import io.switchml.control.ControllerAddress;
import io.switchml.control.ControllerCredentials;
import io.switchml.control.JobNames;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import io.switchml.protocol.SixteenBitLanes;
import io.switchml.udp.Offload;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Pattern;

/**
 * Everything a worker can configure, in one place. Values come, from lowest to highest precedence,
 * from the defaults below, a properties file ({@link Builder#file}), the environment
 * ({@link Builder#environment}: {@code SWITCHML_<KEY>} and the launchers' {@code RANK}, {@code WORLD_SIZE},
 * Kubernetes' {@code JOB_COMPLETION_INDEX},
 * {@code TORCHELASTIC_RUN_ID}, {@code SLURM_PROCID}, {@code SLURM_NTASKS}), system properties
 * ({@link Builder#systemProperties}) and the builder's setters. Property names are
 * {@code switchml.<name>} with the names of {@link Key}.
 */
public final class SwitchMLConfig {
    /** Property names, their defaults and what they mean. */
    public enum Key {
        CONTROLLER("controller", "localhost:" + ProtocolConstants.CONTROLLER_TCP_PORT,
                "host:port of the controller (gRPC)"),
        CONTROLLERS("controllers", "",
                "ordered host:port list of the switches' controllers, active first: on a switch failure the job moves to the"
                        + " next; empty = just `controller`"),
        SHARDS("shards", "",
                "one switch made of several hosts: `;`-separated shards, each a `,`-separated host:port list of its"
                        + " controllers (active first, then its standbys); worker thread t uses shard t mod k, so there are at"
                        + " least k threads, and each shard carries a share of every tensor in proportion to its threads;"
                        + " empty = one switch (`controller`, `controllers`)"),
        FAILOVER_DETECTION_MS("failoverDetectionMs", "10000",
                "with a switch to fail over to: no result for this long while packets are outstanding makes the worker ask"
                        + " the controller, and fail over if it does not answer or no longer knows the job"),
        FALLBACK("fallback", "none",
                "when no switch is left: `ring` finishes the job with ring all-reduce between the workers (needs"
                        + " switchml-collectives on the class path), `none` fails with SwitchUnavailableException"),
        JOB("job", "default", "name of the job; every worker of the job uses the same"),
        JOB_SECRET_FILE("jobSecretFile", "",
                "file holding the job's secret (one line); every rank of the job presents the same, and no other client can"
                        + " join, leave, abort or inspect the job; empty = none"),
        JOB_SECRET("jobSecret", "", "the job's secret itself, when not in jobSecretFile (never printed); empty = none"),
        TLS_CA("tlsCa", "",
                "PEM file of the CA that signed the controller's certificate: the worker talks TLS to the controller;"
                        + " empty = plaintext"),
        TLS_CERT("tlsCert", "", "PEM certificate this worker presents to a controller that requires mutual TLS"),
        TLS_KEY("tlsKey", "", "PEM private key (PKCS#8) of tlsCert"),
        RANK("rank", null, "this worker's rank, 0..workers-1 (required; or the environment's SWITCHML_RANK, RANK,"
                + " SLURM_PROCID or JOB_COMPLETION_INDEX)"),
        WORKERS("workers", null, "number of workers in the job (required; or the environment's SWITCHML_WORKERS,"
                + " WORLD_SIZE or SLURM_NTASKS)"),
        HOST_LAYOUT("hostLayout", "",
                "which ranks share a host, hosts separated by / and their ranks by , (0,1/2,3): the ranks of a host sum"
                        + " their tensors there, through one host-local aggregator, and the switch's job has one worker per"
                        + " host; the launchers set it for the ranks they start on one host; empty = one worker per rank"),
        ELEMENTS_PER_PACKET("elementsPerPacket", "auto",
                "int32 elements per packet: 32, 64, 128, 256, 512, 1024, 2048 or 15360; SwitchML hardware takes 64 and 256,"
                        + " 2048 (8 KiB) fits a 9000-byte MTU, 15360 (60 KiB) only loopback; auto = the largest that fits the"
                        + " MTU of the path to the controller (15360 on loopback, 2048 at MTU 9000, 256 at MTU 1500)"),
        SLOTS_PER_THREAD("slotsPerThread", "auto",
                "slots each worker thread keeps in flight (its window); auto = about 512 KiB of payload, 8 to 64 slots"),
        ONE_ROUND_ELEMENTS("oneRoundElements", "4096",
                "float32 values a worker thread may send in one round trip, without an exponent round first: a share"
                        + " of at most this many that fits one window goes raw and the switch quantizes it (bit-identical"
                        + " results; larger shares cost the switch more CPU than the round trip saves on one host); 0 ="
                        + " always two rounds, for int32 too. Every worker of a job uses the same; the switch may refuse it"),
        SKIP_ZERO_BLOCKS("skipZeroBlocks", "on",
                "on or off: float32 blocks that are zero at every worker cost a one-element packet instead of the block"
                        + " (sparse gradients; results are bit-identical either way). Every worker of a job uses the same"),
        AUTHENTICATE_PACKETS("authenticatePackets", "off",
                "on or off: every packet and result of the job carries an 8-byte tag keyed from the job secret, and the"
                        + " switch and the workers drop and count any whose tag is wrong, so that a host that can send from a"
                        + " worker's or the switch's address cannot change the sums (docs/security.md). Needs a job secret"
                        + " and UDP (not the shared-memory port). Every worker of a job uses the same"),
        LANES("lanes", "32",
                "bits per float32 value on the wire: 32, or 16 (two values per 32-bit element, each with a 16-bit term:"
                        + " half the bytes, about 14 bits of a block's largest value at 2 workers, 8 at 128; at most 128"
                        + " workers). Every worker of a job uses the same"),
        THREADS("threads", "1", "worker threads, each with its own UDP port and slot range"),
        LOCAL_ADDRESS("localAddress", "",
                "IP address the workers' UDP sockets bind to; empty = the address that routes to the switch"),
        TRANSPORT("transport", "auto",
                "how worker threads reach the switch: udp; ipc = the switch's shared-memory port, for a worker on the"
                        + " switch's host (an error elsewhere); auto = ipc where the switch offers it, else udp"),
        UDP_SEGMENTATION("udpSegmentation", "auto",
                "over UDP: a burst's consecutive full-size packets go as one datagram that the kernel cuts into those"
                        + " packets (UDP GSO): one send and one pass through the sending stack for the run; the switch"
                        + " receives the same packets either way. auto = where the epoll transport and kernel (Linux"
                        + " 4.18+) have it, on = required (the worker does not start without it), off = one datagram per"
                        + " packet"),
        UDP_GRO("udpGro", "auto",
                "over UDP: receive with UDP GRO, a run of the switch's results arriving as one datagram that is split"
                        + " into its results, each checked as a single one: one read for the run. auto = where the kernel"
                        + " (Linux 5.0+) grants it, on = required, off = one datagram per result"),
        IPC_SPIN_MICROS("ipcSpinMicros", "auto",
                "on the shared-memory port: how long a worker thread polls for results after work before it sleeps until"
                        + " the switch rings, in microseconds; 0 = never spin; auto = 50 on a host with 4 cores or more, else 0"),
        CONGESTION_CONTROL("congestionControl", "auto",
                "whether each worker thread adapts its window to the path (AIMD on loss and on queueing delay, see"
                        + " docs/configuration.md): on, off (always slotsPerThread in flight), auto = on unless the switch is on loopback,"
                        + " where there is no link to congest"),
        CONGESTION_INITIAL_WINDOW("congestionInitialWindow", "8",
                "with congestion control: the window each worker thread starts with, 1.. (at most slotsPerThread)"),
        CONGESTION_TARGET_DELAY_MICROS("congestionTargetDelayMicros", "2000",
                "with congestion control: the queueing delay tolerated above the smallest RTT seen before the window"
                        + " shrinks; keep it under the bottleneck's buffer (a 5 ms switch port)"),
        RETRANSMIT_MIN_MS("retransmitMinMs", "10",
                "floor of the retransmission timeout; it absorbs the workers' start skew on a loaded host"),
        RETRANSMIT_INITIAL_MS("retransmitInitialMs", "20", "retransmission timeout before an RTT has been measured"),
        RETRANSMIT_MAX_MS("retransmitMaxMs", "1000", "ceiling of the retransmission timeout (after backoff)"),
        OPERATION_TIMEOUT_MS("operationTimeoutMs", "60000", "an all-reduce that takes longer fails"),
        JOIN_TIMEOUT_MS("joinTimeoutMs", "60000", "how long to wait for all workers to join, and for barriers"),
        SOCKET_BUFFER_BYTES("socketBufferBytes", String.valueOf(4 << 20), "SO_RCVBUF and SO_SNDBUF of each UDP socket"),
        FAULT_DROP_RATE("faultDropRate", "0",
                "fault injection (loss tests, the bench's --fault-drop): probability that the worker drops each datagram it sends or receives, 0..1"),
        FAULT_DUPLICATE_RATE("faultDuplicateRate", "0",
                "fault injection: probability that a datagram sent or received (and not dropped) is duplicated, 0..1"),
        FAULT_DELAY_RATE("faultDelayRate", "1",
                "fault injection: probability that each copy of a datagram is delayed (when faultMaxDelayMicros > 0), 0..1"),
        FAULT_MAX_DELAY_MICROS("faultMaxDelayMicros", "0",
                "fault injection: delayed datagrams are held a uniformly random 0..this many microseconds (reordering them);"
                        + " 0 delays nothing"),
        FAULT_SEED("faultSeed", "0",
                "fault injection: seed of the decisions; each worker thread draws from (seed, rank, thread), so a run can be replayed");

        private final String name;
        private final String defaultValue;
        private final String description;

        Key(String name, String defaultValue, String description) {
            this.name = name;
            this.defaultValue = defaultValue;
            this.description = description;
        }

        /** The property name, e.g. {@code switchml.slotsPerThread}. */
        public String property() {
            return PREFIX + name;
        }

        /** The environment variable, e.g. {@code SWITCHML_SLOTS_PER_THREAD}. */
        public String environmentVariable() {
            return ENVIRONMENT_PREFIX + name();
        }

        /**
         * The setting a user named, with or without the {@code switchml.} prefix (the one place the prefix
         * question is settled: both forms are accepted everywhere a name is given, the property form is what
         * travels); an unknown name is an error listing the known ones.
         */
        public static Key named(String name) {
            String bare = name.trim().startsWith(PREFIX) ? name.trim().substring(PREFIX.length()) : name.trim();
            for (Key k : values()) {
                if (k.name.equals(bare)) {
                    return k;
                }
            }
            StringBuilder names = new StringBuilder();
            for (Key k : values()) {
                names.append(names.length() == 0 ? "" : ", ").append(k.name);
            }
            throw new IllegalArgumentException("unknown worker setting '" + name + "'; known (with or without the "
                    + PREFIX + " prefix): " + names);
        }

        /** Every entry of {@code settings} under its property name, each name checked ({@link #named}). */
        public static Map<String, String> properties(Map<String, String> settings) {
            Map<String, String> byProperty = new LinkedHashMap<>();
            settings.forEach((k, v) -> byProperty.put(named(k).property(), v));
            return byProperty;
        }

        public String defaultValue() {
            return defaultValue;
        }

        public String description() {
            return description;
        }
    }

    /**
     * What {@link #elementsPerPacket()} and {@link #slotsPerThread()} return for {@code auto}: chosen
     * from the path when the context connects ({@link SwitchMLContext#config()} has the values chosen).
     */
    public static final int AUTO = 0;
    /** What property names start with (system properties, properties files, the settings that travel). */
    public static final String PREFIX = "switchml.";
    /** What the environment's settings start with (see {@link Builder#environment}). */
    public static final String ENVIRONMENT_PREFIX = "SWITCHML_";

    /** The launcher's own system property (see {@link Builder#systemProperties()}). */
    public static final String LAUNCHER_HOME_PROPERTY = "switchml.home";

    /** What a job does when no switch is left ({@code switchml.fallback}). */
    public enum Fallback {
        /** Fail with {@link SwitchUnavailableException}. */
        NONE,
        /** Finish with ring all-reduce between the workers (switchml-collectives on the class path). */
        RING;

        /** The setting's value, also the name of the {@link io.switchml.api.FallbackProvider} that implements it. */
        public String settingName() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }

        static Fallback parse(String value) {
            for (Fallback f : values()) {
                if (f.settingName().equals(value)) {
                    return f;
                }
            }
            throw new IllegalArgumentException(Key.FALLBACK.property() + " must be ring or none, not '" + value + "'");
        }
    }

    /** The settings as given (strings), for {@link #toMap()} and {@link #toBuilder()}. */
    private final Properties values;

    // Parsed and validated once, in the constructor: a bad value fails when the configuration is built, with its name.
    private final String controller;
    private final List<ControllerAddress> controllers;
    private final List<List<ControllerAddress>> shards;
    private final Duration failoverDetection;
    private final Fallback fallback;
    private final String job;
    private final String jobSecret;
    private final String tlsCa;
    private final String tlsCert;
    private final String tlsKey;
    private final int rank;
    private final int workers;
    private final HostLayout hostLayout;
    private final int elementsPerPacket;
    private final int slotsPerThread;
    private final int threads;
    private final int oneRoundElements;
    private final boolean skipZeroBlocks;
    private final boolean authenticatePackets;
    private final Offload udpSegmentation;
    private final Offload udpGro;
    private final int lanes;
    private final String localAddress;
    private final Congestion congestion;
    private final Transport transport;
    private final long ipcSpinNanos;
    private final LossRecovery lossRecovery;
    private final Duration operationTimeout;
    private final Duration joinTimeout;
    private final int socketBufferBytes;
    private final FaultInjection faultInjection;

    private SwitchMLConfig(Properties values) {
        this.values = values;
        controller = string(Key.CONTROLLER);
        controllers = parseControllers(string(Key.CONTROLLERS), controller);
        shards = parseShards(string(Key.SHARDS));
        if (!shards.isEmpty() && !string(Key.CONTROLLERS).isEmpty()) {
            throw new IllegalArgumentException(Key.SHARDS.property() + " and " + Key.CONTROLLERS.property()
                    + " exclude each other: list each shard's standbys in its own part of " + Key.SHARDS.property()
                    + " (host:port,standby:port;host2:port,...)");
        }
        failoverDetection = millis(Key.FAILOVER_DETECTION_MS, 1, Integer.MAX_VALUE);
        fallback = Fallback.parse(string(Key.FALLBACK));
        job = string(Key.JOB);
        String badJob = JobNames.problem(job);
        if (badJob != null) {
            throw new IllegalArgumentException(Key.JOB.property() + " " + badJob);
        }
        jobSecret = readJobSecret();
        tlsCa = string(Key.TLS_CA);
        tlsCert = string(Key.TLS_CERT);
        tlsKey = string(Key.TLS_KEY);
        if (tlsCert.isEmpty() != tlsKey.isEmpty()) {
            throw new IllegalArgumentException(Key.TLS_CERT.property() + " and " + Key.TLS_KEY.property()
                    + " go together: set both for mutual TLS, or neither");
        }
        workers = (int) inRange(Key.WORKERS, integer(Key.WORKERS), 1, ProtocolConstants.MAX_WORKERS);
        rank = (int) inRange(Key.RANK, integer(Key.RANK), 0, workers - 1);
        hostLayout = string(Key.HOST_LAYOUT).isBlank() ? null : HostLayout.parse(string(Key.HOST_LAYOUT), workers);
        elementsPerPacket = autoOrInteger(Key.ELEMENTS_PER_PACKET);
        if (elementsPerPacket != AUTO) {
            PayloadSize.ofElements(elementsPerPacket);
        }
        slotsPerThread = autoOrInteger(Key.SLOTS_PER_THREAD);
        if (slotsPerThread != AUTO) {
            inRange(Key.SLOTS_PER_THREAD, slotsPerThread, 1, ProtocolConstants.MAX_SLOTS);
        }
        threads = (int) inRange(Key.THREADS, integer(Key.THREADS), 1, ProtocolConstants.SWITCH_UDP_PORT_COUNT);
        oneRoundElements = (int) inRange(Key.ONE_ROUND_ELEMENTS, integer(Key.ONE_ROUND_ELEMENTS), 0, Integer.MAX_VALUE);
        skipZeroBlocks = onOff(Key.SKIP_ZERO_BLOCKS);
        udpSegmentation = offload(Key.UDP_SEGMENTATION);
        udpGro = offload(Key.UDP_GRO);
        lanes = integer(Key.LANES);
        if (lanes != 32 && lanes != 16) {
            throw new IllegalArgumentException(Key.LANES.property() + " must be 32 or 16, not " + lanes);
        }
        if (lanes == 16 && workers > SixteenBitLanes.MAX_WORKERS) {
            throw new IllegalArgumentException(Key.LANES.property() + " = 16 takes at most " + SixteenBitLanes.MAX_WORKERS
                    + " workers, not " + workers + ": beyond, a value keeps fewer than 8 bits, worse than bfloat16; use 32");
        }
        if ((long) slotsPerThread * threads > ProtocolConstants.MAX_SLOTS) {
            throw new IllegalArgumentException(Key.SLOTS_PER_THREAD.property() + " x " + Key.THREADS.property()
                    + " = " + (long) slotsPerThread * threads + " exceeds the " + ProtocolConstants.MAX_SLOTS + " slots of the pool");
        }
        localAddress = string(Key.LOCAL_ADDRESS);
        transport = Transport.parse(string(Key.TRANSPORT));
        authenticatePackets = onOff(Key.AUTHENTICATE_PACKETS);
        if (authenticatePackets && transport == Transport.IPC) {
            throw new IllegalArgumentException(Key.AUTHENTICATE_PACKETS.property() + " = on goes over UDP: the switch's"
                    + " shared-memory port carries no tags; use " + Key.TRANSPORT.property() + " = auto or udp");
        }
        ipcSpinNanos = string(Key.IPC_SPIN_MICROS).equals("auto") ? IpcPoller.defaultSpinNanos()
                : java.util.concurrent.TimeUnit.MICROSECONDS.toNanos(inRange(Key.IPC_SPIN_MICROS,
                integer(Key.IPC_SPIN_MICROS), 0, 1_000_000));
        congestion = new Congestion(CongestionControl.parse(string(Key.CONGESTION_CONTROL)),
                (int) inRange(Key.CONGESTION_INITIAL_WINDOW, integer(Key.CONGESTION_INITIAL_WINDOW), 1, ProtocolConstants.MAX_SLOTS),
                Duration.ofNanos(1000 * inRange(Key.CONGESTION_TARGET_DELAY_MICROS, longValue(Key.CONGESTION_TARGET_DELAY_MICROS),
                        1, 10_000_000)));
        Duration retransmitMin = millis(Key.RETRANSMIT_MIN_MS, 1, Integer.MAX_VALUE);
        Duration retransmitMax = millis(Key.RETRANSMIT_MAX_MS, retransmitMin.toMillis(), Integer.MAX_VALUE);
        // The initial timeout's default (20 ms) follows a floor or ceiling set past it; a value given is checked.
        Duration retransmitInitial = Key.RETRANSMIT_INITIAL_MS.defaultValue.equals(string(Key.RETRANSMIT_INITIAL_MS))
                ? Duration.ofMillis(Math.min(retransmitMax.toMillis(), Math.max(retransmitMin.toMillis(),
                        longValue(Key.RETRANSMIT_INITIAL_MS))))
                : millis(Key.RETRANSMIT_INITIAL_MS, retransmitMin.toMillis(), retransmitMax.toMillis());
        lossRecovery = new LossRecovery(retransmitMin, retransmitInitial, retransmitMax);
        operationTimeout = millis(Key.OPERATION_TIMEOUT_MS, 1, Long.MAX_VALUE);
        joinTimeout = millis(Key.JOIN_TIMEOUT_MS, 1, Integer.MAX_VALUE);
        socketBufferBytes = (int) inRange(Key.SOCKET_BUFFER_BYTES, integer(Key.SOCKET_BUFFER_BYTES), 1024, Integer.MAX_VALUE);
        faultInjection = new FaultInjection(probability(Key.FAULT_DROP_RATE), probability(Key.FAULT_DUPLICATE_RATE),
                probability(Key.FAULT_DELAY_RATE), inRange(Key.FAULT_MAX_DELAY_MICROS, longValue(Key.FAULT_MAX_DELAY_MICROS), 0, 60_000_000),
                longValue(Key.FAULT_SEED));
    }

    public static Builder builder() {
        return new Builder();
    }

    public String controller() {
        return controller;
    }

    /** The switches' controllers in failover order: {@code controllers}, or else the single {@code controller}. */
    public List<ControllerAddress> controllers() {
        return controllers;
    }

    private static List<ControllerAddress> parseControllers(String list, String controller) {
        List<ControllerAddress> addresses = new ArrayList<>();
        for (String item : (list.isEmpty() ? controller : list).split(",")) {
            if (!item.isBlank()) {
                addresses.add(ControllerAddress.parse(item.trim()));
            }
        }
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException(Key.CONTROLLERS.property() + " = '" + list + "' lists no host:port");
        }
        return List.copyOf(addresses);
    }

    /**
     * The shards of a switch made of several hosts, each its controllers in failover order; empty for one switch.
     * A worker joins the job at every shard ({@link ShardedSwitchML}).
     */
    public List<List<ControllerAddress>> shards() {
        return shards;
    }

    private static List<List<ControllerAddress>> parseShards(String list) {
        if (list.isBlank()) {
            return List.of();
        }
        List<List<ControllerAddress>> parsed = new ArrayList<>();
        for (String shard : list.split(";")) {
            if (shard.isBlank()) {
                throw new IllegalArgumentException(Key.SHARDS.property() + " = '" + list + "' has an empty shard");
            }
            parsed.add(parseControllers(shard, ""));
        }
        return List.copyOf(parsed);
    }

    public Duration failoverDetection() {
        return failoverDetection;
    }

    /** The worker's credentials for its controller: TLS and the job secret from this configuration. */
    public ControllerCredentials credentials() {
        return new ControllerCredentials(pathOrNull(tlsCa), pathOrNull(tlsCert), pathOrNull(tlsKey), null,
                jobSecret.isEmpty() ? null : jobSecret);
    }

    private static Path pathOrNull(String setting) {
        return setting.isEmpty() ? null : Path.of(setting);
    }

    /** What to do when no switch is left. */
    public Fallback fallback() {
        return fallback;
    }

    /** Whether a lost switch can be replaced: a standby controller is listed, or a fallback is configured. */
    public boolean failoverEnabled() {
        return controllers.size() > 1 || fallback != Fallback.NONE;
    }

    public String job() {
        return job;
    }

    /** Which ranks share a host ({@link Key#HOST_LAYOUT}); null: one worker per rank. */
    public HostLayout hostLayout() {
        return hostLayout;
    }

    /** The job's secret: {@code jobSecret}, or else the first line of {@code jobSecretFile}; empty when neither is set. */
    public String jobSecret() {
        return jobSecret;
    }

    private String readJobSecret() {
        if (!string(Key.JOB_SECRET).isEmpty()) {
            return string(Key.JOB_SECRET);
        }
        String file = string(Key.JOB_SECRET_FILE);
        return file.isEmpty() ? "" : SecretFiles.read(Path.of(file), Key.JOB_SECRET_FILE.property());
    }

    /** The CA to trust for the controller's TLS certificate; empty: plaintext. */
    public String tlsCa() {
        return tlsCa;
    }

    public String tlsCert() {
        return tlsCert;
    }

    public String tlsKey() {
        return tlsKey;
    }

    public int rank() {
        return rank;
    }

    public int workers() {
        return workers;
    }

    /** The elements per packet, or {@link #AUTO}. */
    public int elementsPerPacket() {
        return elementsPerPacket;
    }

    /** The packet size; only once chosen (not {@link #AUTO}). */
    public PayloadSize payloadSize() {
        if (elementsPerPacket == AUTO) {
            throw new IllegalStateException(Key.ELEMENTS_PER_PACKET.property() + " is auto: the size is chosen when the"
                    + " context connects; read it from SwitchMLContext.config()");
        }
        return PayloadSize.ofElements(elementsPerPacket);
    }

    /** The window per worker thread, or {@link #AUTO}. */
    public int slotsPerThread() {
        return slotsPerThread;
    }

    public int threads() {
        return threads;
    }

    /** The largest share of a worker thread sent in one round trip (float32); 0: never. */
    public int oneRoundElements() {
        return oneRoundElements;
    }

    /** Bits per float32 value on the wire: 32, or 16 (two values per element). */
    public int lanes() {
        return lanes;
    }

    /** Whether the job's packets and results carry tags keyed from the job secret (docs/ARCHITECTURE.md section 19). */
    public boolean authenticatePackets() {
        return authenticatePackets;
    }

    /** Whether this worker asks its job to skip float32 blocks that are zero at every worker. */
    public boolean skipZeroBlocks() {
        return skipZeroBlocks;
    }

    /** Whether a worker thread over UDP sends runs of full-size packets as one segmented datagram (UDP GSO). */
    public Offload udpSegmentation() {
        return udpSegmentation;
    }

    /** Whether a worker thread over UDP receives runs of results as one coalesced datagram (UDP GRO). */
    public Offload udpGro() {
        return udpGro;
    }

    /** Empty when the address is to be chosen by routing. */
    public String localAddress() {
        return localAddress;
    }

    /** Congestion control's settings (docs/configuration.md, "Congestion control"). */
    public Congestion congestion() {
        return congestion;
    }

    /**
     * @param mode          whether worker threads adapt their window to the path: on, off, or auto (on unless the
     *                      switch is on loopback)
     * @param initialWindow the window each worker thread starts with
     * @param targetDelay   the queueing delay tolerated above the smallest RTT before the window shrinks
     */
    public record Congestion(CongestionControl mode, int initialWindow, Duration targetDelay) {
    }

    /** Loss recovery's settings (docs/configuration.md, "Loss detection"). */
    public LossRecovery lossRecovery() {
        return lossRecovery;
    }

    /**
     * The retransmission timeout's bounds.
     *
     * @param retransmitMin     its floor; absorbs the workers' start skew on a loaded host
     * @param retransmitInitial before an RTT has been measured
     * @param retransmitMax     its ceiling, after backoff
     */
    public record LossRecovery(Duration retransmitMin, Duration retransmitInitial, Duration retransmitMax) {
    }

    /** How worker threads reach the switch: udp, ipc (its shared-memory port) or auto. */
    /** How long a worker thread on the shared-memory port polls after work before sleeping, in nanoseconds. */
    public long ipcSpinNanos() {
        return ipcSpinNanos;
    }

    public Transport transport() {
        return transport;
    }

    /** The values of {@code transport} (docs/ARCHITECTURE.md section 11). */
    public enum Transport {
        AUTO, UDP, IPC;

        static Transport parse(String value) {
            for (Transport t : values()) {
                if (t.name().equalsIgnoreCase(value)) {
                    return t;
                }
            }
            throw new IllegalArgumentException(Key.TRANSPORT.property() + " must be auto, udp or ipc, not '" + value + "'");
        }
    }

    /** The values of {@code congestionControl}. */
    public enum CongestionControl {
        ON, OFF, AUTO;

        /** Whether a worker thread whose switch is at {@code switchAddress} adapts its window. */
        public boolean enabledFor(InetAddress switchAddress) {
            return this == ON || (this == AUTO && !switchAddress.isLoopbackAddress());
        }

        static CongestionControl parse(String value) {
            for (CongestionControl c : values()) {
                if (c.name().equalsIgnoreCase(value)) {
                    return c;
                }
            }
            throw new IllegalArgumentException(Key.CONGESTION_CONTROL.property() + " must be on, off or auto, not '" + value
                    + "'");
        }
    }

    public Duration operationTimeout() {
        return operationTimeout;
    }

    public Duration joinTimeout() {
        return joinTimeout;
    }

    public int socketBufferBytes() {
        return socketBufferBytes;
    }

    /** The faults the worker threads inject into their own datagrams ({@link FaultInjection#OFF} by default). */
    public FaultInjection faultInjection() {
        return faultInjection;
    }

    /** Every setting by property name, e.g. to pass the configuration to another process. */
    public Map<String, String> toMap() {
        Map<String, String> map = new LinkedHashMap<>();
        for (Key k : Key.values()) {
            String v = values.getProperty(k.property());
            if (v != null) {
                map.put(k.property(), v);
            }
        }
        return map;
    }

    /** A builder holding these values, to derive a changed configuration. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.values.putAll(values);
        return b;
    }

    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("SwitchMLConfig{");
        for (Key k : Key.values()) {
            String v = values.getProperty(k.property());
            // The secret itself never appears, only whether there is one.
            s.append(k == Key.CONTROLLER ? "" : ", ").append(k.name).append('=')
                    .append(k == Key.JOB_SECRET && v != null && !v.isEmpty() ? "(set)" : v);
        }
        return s.append('}').toString();
    }

    private String string(Key key) {
        String v = values.getProperty(key.property());
        if (v == null) {
            throw new IllegalArgumentException(key.property() + " is required: " + key.description);
        }
        return v.trim();
    }

    private int autoOrInteger(Key key) {
        if (string(key).equalsIgnoreCase("auto")) {
            return AUTO;
        }
        int v = integer(key);
        if (v == AUTO) {
            throw new IllegalArgumentException(key.property() + " = 0: give a positive number or auto (" + key.description + ")");
        }
        return v;
    }

    private int integer(Key key) {
        long v = longValue(key);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(key.property() + " = " + v + " does not fit an int");
        }
        return (int) v;
    }

    private long longValue(Key key) {
        String v = string(key);
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key.property() + " must be an integer, not '" + v + "'", e);
        }
    }

    private Offload offload(Key key) {
        try {
            return Offload.parse(key.property(), string(key));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + " (" + key.description + ")", e);
        }
    }

    private boolean onOff(Key key) {
        String v = string(key).toLowerCase(Locale.ROOT);
        return switch (v) {
            case "on", "true", "yes", "1" -> true;
            case "off", "false", "no", "0" -> false;
            default -> throw new IllegalArgumentException(key.property() + " must be on or off, not '" + string(key)
                    + "' (" + key.description + ")");
        };
    }

    private double probability(Key key) {
        String v = string(key);
        double p;
        try {
            p = Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key.property() + " must be a number, not '" + v + "'", e);
        }
        if (!(p >= 0 && p <= 1)) {
            throw new IllegalArgumentException(key.property() + " = " + v + " outside 0..1 (" + key.description + ")");
        }
        return p;
    }

    private static long inRange(Key key, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(key.property() + " = " + value + " outside " + min + ".." + max
                    + " (" + key.description + ")");
        }
        return value;
    }

    private Duration millis(Key key, long min, long max) {
        return Duration.ofMillis(inRange(key, longValue(key), min, max));
    }

    /** Collects values; {@link #build()} validates them all. */
    public static final class Builder {
        private final Properties values = new Properties();
        /** Where a value came from, for the settings a user cannot see in the program: a file, the environment. */
        private final Map<Key, String> sources = new java.util.EnumMap<>(Key.class);

        private Builder() {
            for (Key k : Key.values()) {
                if (k.defaultValue != null) {
                    values.setProperty(k.property(), k.defaultValue);
                }
            }
        }

        /**
         * Takes every entry, each a setting named with or without the prefix ({@link Key#named}): values the program
         * holds (a plan's settings, a command's options), so errors name no source.
         */
        public Builder settings(Map<String, String> settings) {
            settings.forEach((name, value) -> set(Key.named(name), value));
            return this;
        }

        /** Takes every {@code switchml.*} entry of the properties; unknown names are an error. */
        public Builder properties(Properties props) {
            return properties(props, null);
        }

        private Builder properties(Properties props, String source) {
            for (String name : props.stringPropertyNames()) {
                if (name.startsWith(PREFIX)) {
                    put(Key.named(name), props.getProperty(name), source);
                }
            }
            return this;
        }

        /** Reads a properties file of {@code switchml.*} entries. */
        public Builder file(Path path) {
            Properties props = new Properties();
            try (InputStream in = Files.newInputStream(path)) {
                props.load(in);
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read configuration file " + path + ": " + e.getMessage(), e);
            }
            return properties(props, "file " + path);
        }

        /**
         * Takes the settings a launcher put in the environment: {@code SWITCHML_<KEY>} for any {@link Key}
         * ({@code SWITCHML_JOB}, {@code SWITCHML_CONTROLLER}, {@code SWITCHML_JOIN_TIMEOUT_MS}...; other
         * {@code SWITCHML_*} variables belong to the launchers and are left alone), and the conventions of the
         * launchers users already run ({@link LauncherEnvironment}: rank, workers and a job name from torchrun,
         * MPI-style launchers and srun). A {@code SWITCHML_*} variable wins over a launcher's.
         */
        public Builder environment(Map<String, String> env) {
            LauncherEnvironment launcher = LauncherEnvironment.of(env);
            launcher.settings().forEach((key, value) -> put(key, value, "environment variable "
                    + launcher.sources().get(key)));
            for (Key key : Key.values()) {
                String value = env.get(key.environmentVariable());
                if (value != null) {
                    put(key, value.trim(), "environment variable " + key.environmentVariable());
                }
            }
            return this;
        }

        /**
         * Takes the {@code switchml.*} system properties, except {@value #LAUNCHER_HOME_PROPERTY}, which the
         * {@code ./switchml} launcher sets for itself (the repository's place) and is no worker setting.
         */
        public Builder systemProperties() {
            Properties props = new Properties();
            props.putAll(System.getProperties());
            props.remove(LAUNCHER_HOME_PROPERTY);
            return properties(props, "a system property");
        }

        /** A value the program sets (a command's option, a setter): its own, so errors name no source. */
        public Builder set(Key key, Object value) {
            return put(key, String.valueOf(value), null);
        }

        private Builder put(Key key, String value, String source) {
            values.setProperty(key.property(), value);
            if (source == null) {
                sources.remove(key);
            } else {
                sources.put(key, source);
            }
            return this;
        }

        public Builder controller(String hostPort) {
            return set(Key.CONTROLLER, hostPort);
        }

        /** A switch sharded over several hosts ({@code host:port;host:port}, each shard optionally with standbys after a comma). */
        public Builder shards(String list) {
            return set(Key.SHARDS, list);
        }

        /** Several controllers, active first ({@code host:port,host:port}). */
        public Builder controllers(String list) {
            return set(Key.CONTROLLERS, list);
        }

        public Builder fallback(String fallback) {
            return set(Key.FALLBACK, fallback);
        }

        public Builder failoverDetection(Duration d) {
            return set(Key.FAILOVER_DETECTION_MS, d.toMillis());
        }

        public Builder job(String name) {
            return set(Key.JOB, name);
        }

        public Builder jobSecret(String secret) {
            return set(Key.JOB_SECRET, secret);
        }

        public Builder jobSecretFile(Path file) {
            return set(Key.JOB_SECRET_FILE, file);
        }

        /** TLS to the controller, trusting this CA (PEM). */
        public Builder tlsCa(Path ca) {
            return set(Key.TLS_CA, ca);
        }

        /** Mutual TLS: the certificate and PKCS#8 key this worker presents. */
        public Builder tlsClientCertificate(Path certificate, Path key) {
            set(Key.TLS_CERT, certificate);
            return set(Key.TLS_KEY, key);
        }

        public Builder rank(int rank) {
            return set(Key.RANK, rank);
        }

        public Builder workers(int workers) {
            return set(Key.WORKERS, workers);
        }

        public Builder elementsPerPacket(int elements) {
            return set(Key.ELEMENTS_PER_PACKET, elements);
        }

        public Builder oneRoundElements(int elements) {
            return set(Key.ONE_ROUND_ELEMENTS, elements);
        }

        /** 32 (the default) or 16 bits per float32 value on the wire. */
        public Builder lanes(int bits) {
            return set(Key.LANES, bits);
        }

        public Builder skipZeroBlocks(boolean skip) {
            return set(Key.SKIP_ZERO_BLOCKS, skip ? "on" : "off");
        }

        /** Tags on every packet and result, keyed from the job secret (off by default; needs a job secret). */
        public Builder authenticatePackets(boolean authenticate) {
            return set(Key.AUTHENTICATE_PACKETS, authenticate ? "on" : "off");
        }

        /** Over UDP: runs of full-size packets as one segmented datagram (UDP GSO): auto (the default), on, off. */
        public Builder udpSegmentation(Offload offload) {
            return set(Key.UDP_SEGMENTATION, offload.toString());
        }

        /** Over UDP: runs of results received as one coalesced datagram (UDP GRO): auto (the default), on, off. */
        public Builder udpGro(Offload offload) {
            return set(Key.UDP_GRO, offload.toString());
        }

        public Builder slotsPerThread(int slots) {
            return set(Key.SLOTS_PER_THREAD, slots);
        }

        public Builder threads(int threads) {
            return set(Key.THREADS, threads);
        }

        public Builder localAddress(String address) {
            return set(Key.LOCAL_ADDRESS, address);
        }

        public Builder transport(Transport transport) {
            return set(Key.TRANSPORT, transport.name().toLowerCase(Locale.ROOT));
        }

        public Builder congestionControl(CongestionControl mode) {
            return set(Key.CONGESTION_CONTROL, mode.name().toLowerCase(Locale.ROOT));
        }

        public Builder congestionInitialWindow(int slots) {
            return set(Key.CONGESTION_INITIAL_WINDOW, slots);
        }

        public Builder congestionTargetDelay(Duration d) {
            return set(Key.CONGESTION_TARGET_DELAY_MICROS, d.toNanos() / 1000);
        }

        public Builder retransmitMin(Duration d) {
            return set(Key.RETRANSMIT_MIN_MS, d.toMillis());
        }

        public Builder retransmitInitial(Duration d) {
            return set(Key.RETRANSMIT_INITIAL_MS, d.toMillis());
        }

        public Builder retransmitMax(Duration d) {
            return set(Key.RETRANSMIT_MAX_MS, d.toMillis());
        }

        public Builder operationTimeout(Duration d) {
            return set(Key.OPERATION_TIMEOUT_MS, d.toMillis());
        }

        public Builder joinTimeout(Duration d) {
            return set(Key.JOIN_TIMEOUT_MS, d.toMillis());
        }

        /** Sets every fault-injection setting (see {@link FaultInjection}). */
        public Builder faultInjection(FaultInjection faults) {
            set(Key.FAULT_DROP_RATE, faults.dropRate());
            set(Key.FAULT_DUPLICATE_RATE, faults.duplicateRate());
            set(Key.FAULT_DELAY_RATE, faults.delayRate());
            set(Key.FAULT_MAX_DELAY_MICROS, faults.maxDelayMicros());
            return set(Key.FAULT_SEED, faults.seed());
        }

        /** Validates every value; an error names the setting and, for a file or the environment, where it came from. */
        public SwitchMLConfig build() {
            Properties copy = new Properties();
            copy.putAll(values);
            try {
                return new SwitchMLConfig(copy);
            } catch (IllegalArgumentException e) {
                List<String> from = new ArrayList<>();
                sources.forEach((key, source) -> {
                    if (Pattern.compile(Pattern.quote(key.property()) + "(?![A-Za-z])").matcher(e.getMessage()).find()) {
                        from.add(key.property() + " from " + source);
                    }
                });
                if (from.isEmpty()) {
                    throw e;
                }
                throw new IllegalArgumentException(e.getMessage() + " (" + String.join("; ", from) + ")", e);
            }
        }
    }
}
