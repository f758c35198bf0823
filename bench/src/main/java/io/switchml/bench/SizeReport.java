package io.switchml.bench;

import io.switchml.launch.LineFields;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What a worker reports for one tensor size, as one line on its standard output:
 * {@code RESULT rank=0 bytes=4096 times_ns=1200,1100 verified=true digest=... retransmissions=0 packets=8 sent=9000}.
 *
 * @param verified  null when verification was not asked for
 * @param digest    hash of the result's bits: equal on every worker when results are bit-identical
 * @param bytesSent bytes this worker put on the wire during the timed iterations (all of them together), or -1
 *                  when unknown
 */
public record SizeReport(int rank, long bytes, long[] timesNanos, Boolean verified, long digest, long retransmissions,
                         long packets, long bytesSent) {
    static final String PREFIX = "RESULT ";

    /** Without a byte count. */
    public SizeReport(int rank, long bytes, long[] timesNanos, Boolean verified, long digest, long retransmissions,
                      long packets) {
        this(rank, bytes, timesNanos, verified, digest, retransmissions, packets, -1);
    }

    public String toLine() {
        StringBuilder times = new StringBuilder();
        for (long t : timesNanos) {
            times.append(times.length() == 0 ? "" : ",").append(t);
        }
        return PREFIX + "rank=" + rank + " bytes=" + bytes + " times_ns=" + times + " verified="
                + (verified == null ? "skipped" : verified) + " digest=" + Long.toHexString(digest)
                + " retransmissions=" + retransmissions + " packets=" + packets + " sent=" + bytesSent;
    }

    /** The report on a line, or null when the line is not a report. */
    public static SizeReport parse(String line) {
        if (!line.startsWith(PREFIX)) {
            return null;
        }
        Map<String, String> f = LineFields.parse(line.substring(PREFIX.length()));
        List<Long> times = new ArrayList<>();
        for (String t : f.get("times_ns").split(",")) {
            times.add(Long.parseLong(t));
        }
        String v = f.get("verified");
        return new SizeReport(Integer.parseInt(f.get("rank")), Long.parseLong(f.get("bytes")),
                times.stream().mapToLong(Long::longValue).toArray(),
                "skipped".equals(v) ? null : Boolean.valueOf(v), Long.parseUnsignedLong(f.get("digest"), 16),
                Long.parseLong(f.get("retransmissions")), Long.parseLong(f.get("packets")),
                f.containsKey("sent") ? Long.parseLong(f.get("sent")) : -1);
    }
}
