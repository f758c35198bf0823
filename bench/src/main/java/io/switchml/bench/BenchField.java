package io.switchml.bench;

import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.protocol.kernels.Kernels;
import java.util.Locale;
import java.util.function.Function;

/**
 * The fields of a row in JSON and CSV, in the order both print them: the one list of them, so that
 * the two formats cannot drift apart. Each gives its value as text, numbers written as JSON writes
 * them, or null when the value is unknown (not verified, or no line rate outside the rack).
 */
public enum BenchField {
    ALGO("algo", true, BenchRow::algo),
    WORKERS("workers", false, r -> String.valueOf(r.workers())),
    BYTES("bytes", false, r -> String.valueOf(r.bytes())),
    TYPE("type", true, BenchRow::type),
    ITERATIONS("iterations", false, r -> String.valueOf(r.iterations())),
    MEDIAN_MS("median_ms", false, r -> fixed(r.medianMs())),
    MIN_MS("min_ms", false, r -> fixed(r.minMs())),
    MAX_MS("max_ms", false, r -> fixed(r.maxMs())),
    ALGBW_GBPS("algbw_gbps", false, r -> fixed(r.algbwGbps())),
    BUSBW_GBPS("busbw_gbps", false, r -> fixed(r.busbwGbps())),
    GOODPUT_GBPS("goodput_gbps", false, r -> fixed(r.algbwGbps())),
    ATE_PER_S("ate_per_s", false, r -> String.format(Locale.ROOT, "%.4e", r.atePerSecond())),
    RETRANSMISSIONS("retransmissions", false, r -> String.valueOf(r.retransmissions())),
    VERIFIED("verified", false, r -> r.verified() == null ? null : r.verified().toString()),
    RATE_BPS("rate_bps", false, r -> r.rateBps() == null ? null : r.rateBps().toString()),
    LINE_RATE_FRACTION("line_rate_fraction", false,
            r -> r.lineRateFraction() == null ? null : fixed(r.lineRateFraction())),
    /** Appended after the fields of earlier versions, so CSV readers that count columns keep theirs. */
    WIRE_BYTES("wire_bytes", false, r -> r.wireBytes() == null ? null : r.wireBytes().toString()),
    WIRE_RATIO("wire_ratio", false, r -> r.wireRatio() == null ? null : fixed(r.wireRatio())),
    TOPOLOGY("topology", true, BenchRow::topology),
    /**
     * The payload kernels and JDK of the switch path's JVMs (this one and those it starts, which run the same
     * java with the same modules): {@code vector/jdk25}; null for the baselines, which do not use them.
     */
    KERNELS("kernels", true, r -> AllReduceAlgorithm.find(r.algo()).map(AllReduceAlgorithm::needsSwitch).orElse(false)
            ? Kernels.label() : null),
    /** System calls per all-reduce ({@code bench --syscalls}): a worker's, the mean over workers; the switch's. */
    WORKER_SYSCALLS("worker_syscalls", false, r -> r.workerSyscalls() == null ? null : r.workerSyscalls().toString()),
    SWITCH_SYSCALLS("switch_syscalls", false, r -> r.switchSyscalls() == null ? null : r.switchSyscalls().toString()),
    /** The whole machine's busy CPU-seconds per all-reduce ({@link MachineCpu}). */
    CPU_S("cpu_s", false, r -> r.cpuSeconds() == null ? null : fixed(r.cpuSeconds())),
    /** A worker's datagrams per all-reduce to the switch and the packets each carried (runs: several). */
    DATAGRAMS_OUT("datagrams_out", false, r -> r.datagrams() == null ? null : fixed(r.datagrams().out())),
    PACKETS_PER_DATAGRAM_OUT("packets_per_datagram_out", false,
            r -> r.datagrams() == null ? null : fixed(r.datagrams().packetsPerOut())),
    /** A worker's datagrams of results per all-reduce and the results each carried. */
    DATAGRAMS_IN("datagrams_in", false, r -> r.datagrams() == null ? null : fixed(r.datagrams().in())),
    PACKETS_PER_DATAGRAM_IN("packets_per_datagram_in", false,
            r -> r.datagrams() == null ? null : fixed(r.datagrams().packetsPerIn()));

    private final String key;
    private final boolean text;
    private final Function<BenchRow, String> value;

    BenchField(String key, boolean text, Function<BenchRow, String> value) {
        this.key = key;
        this.text = text;
        this.value = value;
    }

    /** The name in JSON and in the CSV header. */
    public String key() {
        return key;
    }

    /** True for strings (quoted in JSON), false for numbers and booleans. */
    public boolean text() {
        return text;
    }

    /** The row's value as text, or null when unknown. */
    public String valueOf(BenchRow row) {
        return value.apply(row);
    }

    private static String fixed(double v) {
        return String.format(Locale.ROOT, "%.4f", v);
    }
}
