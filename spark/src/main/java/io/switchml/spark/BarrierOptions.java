package io.switchml.spark;

import io.switchml.client.SwitchMLConfig;
import io.switchml.collectives.Compression;
import io.switchml.launch.AllReduceAlgorithm;

import java.io.Serializable;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * How the ranks of a barrier stage ({@link BarrierAllReduce}) aggregate. It travels to the tasks, so it is
 * serializable and holds names, not objects.
 *
 * @param algorithm   {@code switchml} (through a switch), {@code ring}, {@code ps}, {@code topk} or {@code qsgd}
 *                    (TCP between the tasks, endpoints exchanged with the stage's {@code allGather})
 * @param controller  {@code switchml}: {@code HOST:PORT} of a running switch's controller, or null to embed a switch
 *                    in the driver for the stage
 * @param bindAddress the embedded switch's address: its controller and dataplane listen there, and the executors
 *                    reach it there (loopback serves executors on the driver's host only)
 * @param settings    further worker settings (packet size, timeouts, ...), named with or without the {@code switchml.}
 *                    prefix (kept under the prefixed name); rank, workers, job and controller are the stage's own
 * @param compression {@code topk} and {@code qsgd}: their settings ({@link Compression#toSpec()})
 * @param timeout     how long the whole stage may take (zero: no limit); past it the driver cancels the Spark job and fails
 */
public record BarrierOptions(String algorithm, String controller, String bindAddress, Map<String, String> settings,
                             String compression, Duration timeout) implements Serializable {
    private static final long serialVersionUID = 1L;
    /** The default stage timeout: none (a dead rank or switch still fails the stage within seconds). */
    public static final Duration DEFAULT_TIMEOUT = Duration.ZERO;

    public BarrierOptions {
        AllReduceAlgorithm.named(Objects.requireNonNull(algorithm, "algorithm"));
        Objects.requireNonNull(bindAddress, "bindAddress");
        settings = Map.copyOf(SwitchMLConfig.Key.properties(settings));
        Compression.parse(compression);
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException("the stage timeout must be positive, or zero for none, not " + timeout);
        }
    }

    /** {@code switchml} through a switch embedded in the driver on loopback, default settings, no stage timeout. */
    public static BarrierOptions defaults() {
        return new BarrierOptions(AllReduceAlgorithm.switchMl().id(), null, "127.0.0.1", Map.of(), Compression.DEFAULTS.toSpec(),
                DEFAULT_TIMEOUT);
    }

    public BarrierOptions withAlgorithm(String a) {
        return new BarrierOptions(a, controller, bindAddress, settings, compression, timeout);
    }

    /** A running switch's controller, {@code HOST:PORT}; null embeds one in the driver. */
    public BarrierOptions withController(String c) {
        return new BarrierOptions(algorithm, c, bindAddress, settings, compression, timeout);
    }

    public BarrierOptions withBindAddress(String address) {
        return new BarrierOptions(algorithm, controller, address, settings, compression, timeout);
    }

    public BarrierOptions withSetting(String key, String value) {
        Map<String, String> s = new LinkedHashMap<>(settings);
        s.put(key, value);
        return new BarrierOptions(algorithm, controller, bindAddress, s, compression, timeout);
    }

    public BarrierOptions withSettings(Map<String, String> more) {
        Map<String, String> s = new LinkedHashMap<>(settings);
        s.putAll(more);
        return new BarrierOptions(algorithm, controller, bindAddress, s, compression, timeout);
    }

    public BarrierOptions withCompression(Compression c) {
        return new BarrierOptions(algorithm, controller, bindAddress, settings, c.toSpec(), timeout);
    }

    public BarrierOptions withTimeout(Duration t) {
        return new BarrierOptions(algorithm, controller, bindAddress, settings, compression, t);
    }

    AllReduceAlgorithm benchAlgorithm() {
        return AllReduceAlgorithm.named(algorithm);
    }
}
