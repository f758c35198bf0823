package io.switchml.client;

import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * Everything a worker can configure, in one place. Values come, from lowest to highest precedence,
 * from the defaults below, a properties file ({@link Builder#file}), system properties
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
        RANK("rank", null, "this worker's rank, 0..workers-1 (required)"),
        WORKERS("workers", null, "number of workers in the job (required)"),
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
        THREADS("threads", "1", "worker threads, each with its own UDP port and slot range"),
        LOCAL_ADDRESS("localAddress", "",
                "IP address the workers' UDP sockets bind to; empty = the address that routes to the switch"),
        RETRANSMIT_MIN_MS("retransmitMinMs", "10",
                "floor of the retransmission timeout; it absorbs the workers' start skew on a loaded host"),
        RETRANSMIT_INITIAL_MS("retransmitInitialMs", "20", "retransmission timeout before an RTT has been measured"),
        RETRANSMIT_MAX_MS("retransmitMaxMs", "1000", "ceiling of the retransmission timeout (after backoff)"),
        OPERATION_TIMEOUT_MS("operationTimeoutMs", "60000", "an all-reduce that takes longer fails"),
        JOIN_TIMEOUT_MS("joinTimeoutMs", "60000", "how long to wait for all workers to join, and for barriers"),
        SOCKET_BUFFER_BYTES("socketBufferBytes", String.valueOf(4 << 20), "SO_RCVBUF and SO_SNDBUF of each UDP socket"),
        FAULT_DROP_RATE("faultDropRate", "0",
                "fault injection, for tests: probability that the worker drops each datagram it sends or receives, 0..1"),
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
            return "switchml." + name;
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

    private final Properties values;

    private SwitchMLConfig(Properties values) {
        this.values = values;
        // Parse everything once so that a bad value fails here, with its name, not mid-job.
        if (elementsPerPacket() != AUTO) {
            PayloadSize.ofElements(elementsPerPacket());
        }
        requireRange(Key.WORKERS, workers(), 1, ProtocolConstants.MAX_WORKERS);
        requireRange(Key.RANK, rank(), 0, workers() - 1);
        if (slotsPerThread() != AUTO) {
            requireRange(Key.SLOTS_PER_THREAD, slotsPerThread(), 1, ProtocolConstants.MAX_SLOTS);
        }
        requireRange(Key.THREADS, threads(), 1, ProtocolConstants.SWITCH_UDP_PORT_COUNT);
        requireRange(Key.ONE_ROUND_ELEMENTS, oneRoundElements(), 0, Integer.MAX_VALUE);
        if ((long) slotsPerThread() * threads() > ProtocolConstants.MAX_SLOTS) {
            throw new IllegalArgumentException(Key.SLOTS_PER_THREAD.property() + " x " + Key.THREADS.property()
                    + " = " + (long) slotsPerThread() * threads() + " exceeds the " + ProtocolConstants.MAX_SLOTS + " slots of the pool");
        }
        requireRange(Key.RETRANSMIT_MIN_MS, retransmitMin().toMillis(), 1, Integer.MAX_VALUE);
        requireRange(Key.RETRANSMIT_MAX_MS, retransmitMax().toMillis(), retransmitMin().toMillis(), Integer.MAX_VALUE);
        requireRange(Key.RETRANSMIT_INITIAL_MS, retransmitInitial().toMillis(), retransmitMin().toMillis(), retransmitMax().toMillis());
        requireRange(Key.OPERATION_TIMEOUT_MS, operationTimeout().toMillis(), 1, Long.MAX_VALUE);
        requireRange(Key.JOIN_TIMEOUT_MS, joinTimeout().toMillis(), 1, Integer.MAX_VALUE);
        requireRange(Key.SOCKET_BUFFER_BYTES, socketBufferBytes(), 1024, Integer.MAX_VALUE);
        requireRange(Key.FAULT_MAX_DELAY_MICROS, longValue(Key.FAULT_MAX_DELAY_MICROS), 0, 60_000_000);
        faultInjection();
        controllers();
        requireRange(Key.FAILOVER_DETECTION_MS, failoverDetection().toMillis(), 1, Integer.MAX_VALUE);
        fallback();
        jobSecret();
        if (tlsCert().isEmpty() != tlsKey().isEmpty()) {
            throw new IllegalArgumentException(Key.TLS_CERT.property() + " and " + Key.TLS_KEY.property()
                    + " go together: set both for mutual TLS, or neither");
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public String controller() {
        return string(Key.CONTROLLER);
    }

    /** The switches' controllers in failover order: {@code controllers}, or else the single {@code controller}. */
    public List<ControllerAddress> controllers() {
        String list = string(Key.CONTROLLERS);
        List<ControllerAddress> addresses = new ArrayList<>();
        for (String item : (list.isEmpty() ? controller() : list).split(",")) {
            if (!item.isBlank()) {
                addresses.add(ControllerAddress.parse(item.trim()));
            }
        }
        if (addresses.isEmpty()) {
            throw new IllegalArgumentException(Key.CONTROLLERS.property() + " = '" + list + "' lists no host:port");
        }
        return List.copyOf(addresses);
    }

    public Duration failoverDetection() {
        return Duration.ofMillis(longValue(Key.FAILOVER_DETECTION_MS));
    }

    /** What to do when no switch is left: {@code ring} or {@code none}. */
    public String fallback() {
        String v = string(Key.FALLBACK);
        if (!v.equals("ring") && !v.equals("none")) {
            throw new IllegalArgumentException(Key.FALLBACK.property() + " must be ring or none, not '" + v + "'");
        }
        return v;
    }

    /** Whether a lost switch can be replaced: a standby controller is listed, or a fallback is configured. */
    public boolean failoverEnabled() {
        return controllers().size() > 1 || !fallback().equals("none");
    }

    public String job() {
        return string(Key.JOB);
    }

    /** The job's secret: {@code jobSecret}, or else the first line of {@code jobSecretFile}; empty when neither is set. */
    public String jobSecret() {
        if (!string(Key.JOB_SECRET).isEmpty()) {
            return string(Key.JOB_SECRET);
        }
        String file = string(Key.JOB_SECRET_FILE);
        return file.isEmpty() ? "" : SecretFiles.read(Path.of(file), Key.JOB_SECRET_FILE.property());
    }

    /** The CA to trust for the controller's TLS certificate; empty: plaintext. */
    public String tlsCa() {
        return string(Key.TLS_CA);
    }

    public String tlsCert() {
        return string(Key.TLS_CERT);
    }

    public String tlsKey() {
        return string(Key.TLS_KEY);
    }

    public int rank() {
        return integer(Key.RANK);
    }

    public int workers() {
        return integer(Key.WORKERS);
    }

    /** The elements per packet, or {@link #AUTO}. */
    public int elementsPerPacket() {
        return autoOrInteger(Key.ELEMENTS_PER_PACKET);
    }

    /** The packet size; only once chosen (not {@link #AUTO}). */
    public PayloadSize payloadSize() {
        if (elementsPerPacket() == AUTO) {
            throw new IllegalStateException(Key.ELEMENTS_PER_PACKET.property() + " is auto: the size is chosen when the"
                    + " context connects; read it from SwitchMLContext.config()");
        }
        return PayloadSize.ofElements(elementsPerPacket());
    }

    /** The window per worker thread, or {@link #AUTO}. */
    public int slotsPerThread() {
        return autoOrInteger(Key.SLOTS_PER_THREAD);
    }

    public int threads() {
        return integer(Key.THREADS);
    }

    /** The largest share of a worker thread sent in one round trip (float32); 0: never. */
    public int oneRoundElements() {
        return integer(Key.ONE_ROUND_ELEMENTS);
    }

    /** Empty when the address is to be chosen by routing. */
    public String localAddress() {
        return string(Key.LOCAL_ADDRESS);
    }

    public Duration retransmitMin() {
        return Duration.ofMillis(longValue(Key.RETRANSMIT_MIN_MS));
    }

    public Duration retransmitInitial() {
        return Duration.ofMillis(longValue(Key.RETRANSMIT_INITIAL_MS));
    }

    public Duration retransmitMax() {
        return Duration.ofMillis(longValue(Key.RETRANSMIT_MAX_MS));
    }

    public Duration operationTimeout() {
        return Duration.ofMillis(longValue(Key.OPERATION_TIMEOUT_MS));
    }

    public Duration joinTimeout() {
        return Duration.ofMillis(longValue(Key.JOIN_TIMEOUT_MS));
    }

    public int socketBufferBytes() {
        return integer(Key.SOCKET_BUFFER_BYTES);
    }

    /** The faults the worker threads inject into their own datagrams ({@link FaultInjection#OFF} by default). */
    public FaultInjection faultInjection() {
        return new FaultInjection(probability(Key.FAULT_DROP_RATE), probability(Key.FAULT_DUPLICATE_RATE),
                probability(Key.FAULT_DELAY_RATE), longValue(Key.FAULT_MAX_DELAY_MICROS), longValue(Key.FAULT_SEED));
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

    private static void requireRange(Key key, long value, long min, long max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(key.property() + " = " + value + " outside " + min + ".." + max
                    + " (" + key.description + ")");
        }
    }

    /** Collects values; {@link #build()} validates them all. */
    public static final class Builder {
        private final Properties values = new Properties();

        private Builder() {
            for (Key k : Key.values()) {
                if (k.defaultValue != null) {
                    values.setProperty(k.property(), k.defaultValue);
                }
            }
        }

        /** Takes every {@code switchml.*} entry of the properties; unknown names are an error. */
        public Builder properties(Properties props) {
            for (String name : props.stringPropertyNames()) {
                if (name.startsWith("switchml.")) {
                    values.setProperty(known(name).property(), props.getProperty(name));
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
            return properties(props);
        }

        /** Takes the {@code switchml.*} system properties. */
        public Builder systemProperties() {
            return properties(System.getProperties());
        }

        public Builder set(Key key, Object value) {
            values.setProperty(key.property(), String.valueOf(value));
            return this;
        }

        public Builder controller(String hostPort) {
            return set(Key.CONTROLLER, hostPort);
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

        public Builder slotsPerThread(int slots) {
            return set(Key.SLOTS_PER_THREAD, slots);
        }

        public Builder threads(int threads) {
            return set(Key.THREADS, threads);
        }

        public Builder localAddress(String address) {
            return set(Key.LOCAL_ADDRESS, address);
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

        public SwitchMLConfig build() {
            Properties copy = new Properties();
            copy.putAll(values);
            return new SwitchMLConfig(copy);
        }

        private static Key known(String property) {
            for (Key k : Key.values()) {
                if (k.property().equals(property)) {
                    return k;
                }
            }
            StringBuilder names = new StringBuilder();
            for (Key k : Key.values()) {
                names.append(names.length() == 0 ? "" : ", ").append(k.property());
            }
            throw new IllegalArgumentException("unknown configuration property " + property + "; known: " + names);
        }
    }
}
