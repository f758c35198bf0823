package io.switchml.dataplane;

import org.agrona.collections.Long2LongHashMap;

/**
 * The switch's worker table: which job and rank a packet belongs to, by where it comes from
 * (source IPv4 address and UDP port), as SwitchML's UDP receiver table matches on the source.
 *
 * <p>Immutable once built: the control plane builds a changed copy and publishes it, so the
 * receive threads read it without locks. Entries pack {@code jobNumber << 8 | rank}.
 */
final class WorkerTable {
    /** Lookup result for a source that is not in the table. */
    static final long MISSING = -1L;

    static final WorkerTable EMPTY = new WorkerTable(new Long2LongHashMap(MISSING));

    private final Long2LongHashMap entries;

    private WorkerTable(Long2LongHashMap entries) {
        this.entries = entries;
    }

    /** The key of a source: its address in bits 47..16 and its port in bits 15..0. */
    static long key(int ipv4, int port) {
        return (ipv4 & 0xFFFF_FFFFL) << 16 | (port & 0xFFFF);
    }

    /** The entry of the source, or {@link #MISSING}. */
    long lookup(int ipv4, int port) {
        return entries.get(key(ipv4, port));
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
                long previous = copy.put(key(ipv4, endpoint.port(thread)), (long) spec.jobNumber() << 8 | rank);
                if (previous != MISSING) {
                    throw new IllegalStateException("worker endpoint " + endpoint.address().getHostAddress() + ":"
                            + endpoint.port(thread) + " of job " + spec.jobNumber() + " already belongs to job "
                            + jobNumber(previous));
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
