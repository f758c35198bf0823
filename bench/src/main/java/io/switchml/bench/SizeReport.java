package io.switchml.bench;

import io.switchml.launch.ReportLine;

/**
 * What a worker reports for one tensor size, as one {@link ReportLine} on its standard output:
 * {@code RESULT {"rank":0,"bytes":4096,"timesNanos":[1200,1100],"verified":true,"digest":...,"retransmissions":0,
 * "packets":8,"bytesSent":9000}}.
 *
 * @param verified  null when verification was not asked for
 * @param digest    hash of the result's bits: equal on every worker when results are bit-identical
 * @param bytesSent bytes this worker put on the wire during the timed iterations (all of them together), or -1
 *                  when unknown
 * @param syscalls  system calls this worker's process made during the timed iterations (barriers included), or -1
 *                  when not counted
 * @param switchSyscalls rank 0: those of the switch's processes over the same stretch, or -1 when not counted
 * @param cpuNanos  rank 0: the whole machine's busy CPU time during the timed all-reduces ({@link MachineCpu}), or -1
 * @param datagrams this worker's datagrams during the timed all-reduces, or null where not known (the TCP baselines)
 */
public record SizeReport(int rank, long bytes, long[] timesNanos, Boolean verified, long digest, long retransmissions,
                         long packets, long bytesSent, long syscalls, long switchSyscalls, long cpuNanos,
                         Datagrams datagrams) {
    static final String KIND = "RESULT";

    /**
     * A worker's UDP traffic over its timed all-reduces: packets and datagrams each way (a run sent as one segmented
     * datagram, or received as one coalesced datagram, counts once).
     */
    public record Datagrams(long packetsSent, long datagramsSent, long packetsReceived, long datagramsReceived) {
    }

    /** Without CPU time or datagrams. */
    public SizeReport(int rank, long bytes, long[] timesNanos, Boolean verified, long digest, long retransmissions,
                      long packets, long bytesSent, long syscalls, long switchSyscalls) {
        this(rank, bytes, timesNanos, verified, digest, retransmissions, packets, bytesSent, syscalls, switchSyscalls,
                -1, null);
    }

    /** Without system calls counted. */
    public SizeReport(int rank, long bytes, long[] timesNanos, Boolean verified, long digest, long retransmissions,
                      long packets, long bytesSent) {
        this(rank, bytes, timesNanos, verified, digest, retransmissions, packets, bytesSent, -1, -1);
    }

    /** Without a byte count. */
    public SizeReport(int rank, long bytes, long[] timesNanos, Boolean verified, long digest, long retransmissions,
                      long packets) {
        this(rank, bytes, timesNanos, verified, digest, retransmissions, packets, -1);
    }

    public String toLine() {
        return ReportLine.write(KIND, this);
    }

    /** The report on a line, or null when the line is not a report. */
    public static SizeReport parse(String line) {
        return ReportLine.read(line, KIND, SizeReport.class);
    }
}
