package io.switchml.dataplane;

import org.agrona.collections.Long2LongHashMap;

/**
 * The switch's worker table: which job and rank a packet belongs to, by where it comes from
 * (source IPv4 address and UDP port), as SwitchML's UDP receiver table matches on the source.
 * A worker installed with {@link WorkerEndpoint#ANY_PORT} (a SwitchML worker) matches every port
 * of its address that no exact entry claims.
 *
 * <p>Immutable once built: the control plane builds a changed copy and publishes it, so the
 * receive threads read it without locks. Entries pack {@code addressOnly << 16 | jobNumber << 8 | rank}.
 */
final class WorkerTable {
    /** Lookup result for a source that is not in the table. */
    static final long MISSING = -1L;

    /** Entry bit: the source matched by its address alone. */
    private static final long ADDRESS_ONLY = 1L << 16;

    static final WorkerTable EMPTY = new WorkerTable(new Long2LongHashMap(MISSING));

    private final Long2LongHashMap entries;

    private WorkerTable(Long2LongHashMap entries) {
        this.entries = entries;
    }

    /** The key of a source: its address in bits 47..16 and its port in bits 15..0. */
    static long key(int ipv4, int port) {
        return (ipv4 & 0xFFFF_FFFFL) << 16 | (port & 0xFFFF);
    }

    /** The entry of the source, or {@link #MISSING}; an exact (address, port) entry wins over an any-port one. */
    long lookup(int ipv4, int port) {
        long exact = entries.get(key(ipv4, port));
        return exact != MISSING ? exact : entries.get(key(ipv4, WorkerEndpoint.ANY_PORT));
    }

    /**
     * Whether the entry is of a worker matched by address alone: a SwitchML worker, whose header
     * job number is its own short job id (the switch echoes it) and whose results go to the port
     * each packet came from.
     */
    static boolean addressOnly(long entry) {
        return (entry & ADDRESS_ONLY) != 0;
    }

    static int jobNumber(long entry) {
        return (int) (entry >>> 8) & 0xFF;
    }

    static int rank(long entry) {
        return (int) entry & 0xFF;
    }

    /** Number of (address, port) sources in the table. */
    int size() {
        return entries.size();
    }

    /**
     * A copy of this table with every worker thread of {@code spec} added.
     *
     * @throws IllegalStateException when one of its sources already belongs to a job
     */
    WorkerTable withJob(JobSpec spec) {
        Long2LongHashMap copy = new Long2LongHashMap(entries);
        for (int rank = 0; rank < spec.workers(); rank++) {
            WorkerEndpoint endpoint = spec.endpoints().get(rank);
            int ipv4 = Ipv4.toInt(endpoint.address());
            for (int thread = 0; thread < endpoint.threads(); thread++) {
                long entry = (endpoint.anyPort() ? ADDRESS_ONLY : 0) | (long) spec.jobNumber() << 8 | rank;
                long previous = copy.put(key(ipv4, endpoint.port(thread)), entry);
                // The same entry again is another thread of a rank whose threads share a port (a leaf's).
                if (previous != MISSING && previous != entry) {
                    String port = endpoint.anyPort() ? "any port" : String.valueOf(endpoint.port(thread));
                    throw new IllegalStateException("worker endpoint " + endpoint.address().getHostAddress() + ":" + port
                            + " of job " + spec.jobNumber() + " already belongs to job " + jobNumber(previous));
                }
            }
        }
        return new WorkerTable(copy);
    }

    /** A copy of this table without the sources of {@code spec}. */
    WorkerTable withoutJob(JobSpec spec) {
        Long2LongHashMap copy = new Long2LongHashMap(entries);
        for (WorkerEndpoint endpoint : spec.endpoints()) {
            int ipv4 = Ipv4.toInt(endpoint.address());
            for (int thread = 0; thread < endpoint.threads(); thread++) {
                copy.remove(key(ipv4, endpoint.port(thread)));
            }
        }
        return new WorkerTable(copy);
    }
}
