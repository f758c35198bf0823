package io.switchml.bench;

import java.util.Arrays;
import java.util.List;

/**
 * The measurement of one (algorithm, workers, size), in the conventions users know: nccl-tests'
 * time, algbw = S/t and busbw = algbw * 2(n-1)/n; SwitchML's goodput; the paper's ATE/s
 * (aggregated tensor elements per second). Bandwidths are in Gbit/s (nccl-tests prints GB/s:
 * divide by 8). Every statistic derives from the per-iteration time, which is the slowest
 * worker's time for that iteration.
 *
 * @param verified true when every worker's result matched the exact expected value and all were
 *                 bit-identical; null when verification was not asked for
 * @param rateBps  the emulated rack's line rate in bit/s ({@code "rate_bps"} in JSON); null outside the rack
 * @param wireBytes bytes each worker put on the wire per all-reduce, the mean over workers and timed iterations
 *                 ({@code switchml}: UDP payload of every packet sent, retransmissions included; the TCP baselines:
 *                 TCP payload to other processes, their headers included); null when unknown
 * @param topology where the switch sits: in the rack {@link Rack.Spec#topology()} ({@code fabric}, or {@code K-host}
 *                 for K switch servers behind a link each); on loopback {@code K-shard} for a job sharded over K
 *                 embedded switches; else null
 * @param workerSyscalls system calls a worker's process made per all-reduce, the mean over workers and timed
 *                 iterations (each iteration's barrier included); null when not counted ({@code bench --syscalls})
 * @param switchSyscalls the same for the switch's processes together; null when not counted or not known (a running
 *                 switch's, {@code --controller})
 * @param cpuSeconds the whole machine's busy CPU-seconds per all-reduce (every process and the kernel's packet work,
 *                 {@link MachineCpu}): in the rack, what the all-reduce costs the one machine that emulates it; null
 *                 where not measured
 * @param datagrams a worker's datagrams per all-reduce each way and the packets each carried, the mean over workers;
 *                 null where not known (the TCP baselines)
 */
public record BenchRow(String algo, int workers, long bytes, String type, int iterations, double medianMs, double minMs,
                       double maxMs, long retransmissions, Boolean verified, Long rateBps, Long wireBytes,
                       String topology, Long workerSyscalls, Long switchSyscalls, Double cpuSeconds, Datagrams datagrams) {
    /**
     * A worker's UDP datagrams per all-reduce, to the switch ({@code out}) and from it ({@code in}), and the packets per
     * datagram each way (1 without runs; a run sent as one segmented datagram or received as one coalesced datagram is
     * one datagram of several packets).
     */
    public record Datagrams(double out, double packetsPerOut, double in, double packetsPerIn) {
    }

    /** Without CPU time or datagrams. */
    public BenchRow(String algo, int workers, long bytes, String type, int iterations, double medianMs, double minMs,
                    double maxMs, long retransmissions, Boolean verified, Long rateBps, Long wireBytes,
                    String topology, Long workerSyscalls, Long switchSyscalls) {
        this(algo, workers, bytes, type, iterations, medianMs, minMs, maxMs, retransmissions, verified, rateBps, wireBytes,
                topology, workerSyscalls, switchSyscalls, null, null);
    }

    /** Without system calls counted. */
    public BenchRow(String algo, int workers, long bytes, String type, int iterations, double medianMs, double minMs,
                    double maxMs, long retransmissions, Boolean verified, Long rateBps, Long wireBytes, String topology) {
        this(algo, workers, bytes, type, iterations, medianMs, minMs, maxMs, retransmissions, verified, rateBps, wireBytes,
                topology, null, null);
    }

    /** Outside the rack's topologies. */
    public BenchRow(String algo, int workers, long bytes, String type, int iterations, double medianMs, double minMs,
                    double maxMs, long retransmissions, Boolean verified, Long rateBps, Long wireBytes) {
        this(algo, workers, bytes, type, iterations, medianMs, minMs, maxMs, retransmissions, verified, rateBps, wireBytes,
                null);
    }

    /** Without a byte count. */
    public BenchRow(String algo, int workers, long bytes, String type, int iterations, double medianMs, double minMs,
                    double maxMs, long retransmissions, Boolean verified, Long rateBps) {
        this(algo, workers, bytes, type, iterations, medianMs, minMs, maxMs, retransmissions, verified, rateBps, null);
    }

    /** A row measured outside the rack. */
    public BenchRow(String algo, int workers, long bytes, String type, int iterations, double medianMs, double minMs,
                    double maxMs, long retransmissions, Boolean verified) {
        this(algo, workers, bytes, type, iterations, medianMs, minMs, maxMs, retransmissions, verified, null);
    }

    /** The same row, measured in a rack with links of this rate. */
    public BenchRow withRate(long bitsPerSecond) {
        return new BenchRow(algo, workers, bytes, type, iterations, medianMs, minMs, maxMs, retransmissions, verified,
                bitsPerSecond, wireBytes, topology, workerSyscalls, switchSyscalls, cpuSeconds, datagrams);
    }

    /** The same row, measured in a rack of this topology. */
    public BenchRow withTopology(String rackTopology) {
        return new BenchRow(algo, workers, bytes, type, iterations, medianMs, minMs, maxMs, retransmissions, verified,
                rateBps, wireBytes, rackTopology, workerSyscalls, switchSyscalls, cpuSeconds, datagrams);
    }

    /** Builds the row from every rank's report of one size. */
    public static BenchRow of(String algo, int workers, String type, List<SizeReport> reports) {
        SizeReport first = reports.get(0);
        int iterations = first.timesNanos().length;
        double[] slowest = new double[iterations];
        long retransmissions = 0;
        Boolean verified = first.verified() == null ? null : Boolean.TRUE;
        long sent = 0;
        boolean sentKnown = true;
        long syscalls = 0;
        boolean syscallsKnown = true;
        Long switchSyscalls = null;
        Double cpuSeconds = null;
        long[] traffic = new long[4]; // packets and datagrams sent, packets and datagrams received, over all workers
        boolean trafficKnown = true;
        for (SizeReport r : reports) {
            if (r.cpuNanos() >= 0) {
                cpuSeconds = r.cpuNanos() / 1e9 / iterations;
            }
            SizeReport.Datagrams d = r.datagrams();
            trafficKnown &= d != null;
            if (d != null) {
                traffic[0] += d.packetsSent();
                traffic[1] += d.datagramsSent();
                traffic[2] += d.packetsReceived();
                traffic[3] += d.datagramsReceived();
            }
            sent += r.bytesSent();
            sentKnown &= r.bytesSent() >= 0;
            syscalls += r.syscalls();
            syscallsKnown &= r.syscalls() >= 0;
            if (r.switchSyscalls() >= 0) {
                switchSyscalls = Math.round((double) r.switchSyscalls() / iterations);
            }
            for (int i = 0; i < iterations; i++) {
                slowest[i] = Math.max(slowest[i], r.timesNanos()[i] / 1e6);
            }
            retransmissions += r.retransmissions();
            if (verified != null && (!Boolean.TRUE.equals(r.verified()) || r.digest() != first.digest())) {
                verified = Boolean.FALSE;
            }
        }
        Arrays.sort(slowest);
        double median = iterations % 2 == 1 ? slowest[iterations / 2]
                : (slowest[iterations / 2 - 1] + slowest[iterations / 2]) / 2;
        Long wire = sentKnown ? Math.round((double) sent / reports.size() / iterations) : null;
        Long workerSyscalls = syscallsKnown ? Math.round((double) syscalls / reports.size() / iterations) : null;
        double perWorker = (double) reports.size() * iterations;
        Datagrams datagrams = trafficKnown ? new Datagrams(traffic[1] / perWorker, ratio(traffic[0], traffic[1]),
                traffic[3] / perWorker, ratio(traffic[2], traffic[3])) : null;
        return new BenchRow(algo, workers, first.bytes(), type, iterations, median, slowest[0], slowest[iterations - 1],
                retransmissions, verified, null, wire, null, workerSyscalls, switchSyscalls, cpuSeconds, datagrams);
    }

    private static double ratio(long packets, long datagrams) {
        return datagrams == 0 ? 0 : (double) packets / datagrams;
    }

    /** Bytes on the wire per worker over the tensor's bytes (1.5 for a 4-worker ring); null when unknown. */
    public Double wireRatio() {
        return wireBytes == null || bytes == 0 ? null : (double) wireBytes / bytes;
    }

    public long elements() {
        return bytes / 4;
    }

    /** Tensor bits per second of median time, in Gbit/s: nccl-tests' algbw, SwitchML's goodput. */
    public double algbwGbps() {
        return bytes * 8 / (medianMs * 1e-3) / 1e9;
    }

    public double busbwGbps() {
        return algbwGbps() * 2 * (workers - 1) / workers;
    }

    public double atePerSecond() {
        return elements() / (medianMs * 1e-3);
    }

    /**
     * The fraction of the line rate reached, in the rack: the time the tensor takes through one link at
     * {@code rate_bps} (S/B) over the median time. 1 is the bound for in-network aggregation; ring all-reduce
     * (and one parameter server per worker) must move 2(n-1)/n S through each link, so its best is n/(2(n-1)).
     * Null without a rate.
     */
    public Double lineRateFraction() {
        return rateBps == null ? null : bytes * 8.0 / rateBps / (medianMs * 1e-3);
    }
}
