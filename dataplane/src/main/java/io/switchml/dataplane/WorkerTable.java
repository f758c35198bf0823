package io.switchml.dataplane;

import org.agrona.collections.Long2LongHashMap;

/**
 * The switch's worker table: which job and rank a packet belongs to, by where it comes from
 * (source IPv4 address and UDP port), as SwitchML's UDP receiver table matches on the source.
 * A worker installed with {@link WorkerEndpoint#ANY_PORT} (a SwitchML worker) matches every port
 * of its address that no exact entry claims.
 *
 * <p>A leaf switch under this one ({@link WorkerEndpoint#leaf()}, docs/ARCHITECTURE.md section 9)
 * sends the partials of all its hierarchical jobs from its own switch ports, so one source may be in
 * several jobs: its entry is then a marker (with how many jobs share the source), and the header's
 * job number picks the job's entry in a second map. Any other source belongs to one job.
 *
 * <p>Immutable once built: the control plane builds a changed copy and publishes it, so the
 * receive threads read it without locks. Entries pack {@code addressOnly << 16 | jobNumber << 8 | rank}.
 */
final class WorkerTable {
    /** Lookup result for a source that is not in the table. */
    static final long MISSING = -1L;
    /** Lookup result for a leaf's source that serves other jobs than the header's. */
    static final long OTHER_JOB = -2L;

    /**
     * Entry of one of the switch's own sources at the address of a worker matched by address alone
     * ({@link OwnSources}): such a source is no worker's, whatever the any-port entry says.
     */
    private static final long OWN_SOURCE = -3L;

    /** Entry bit: the source matched by its address alone. */
    private static final long ADDRESS_ONLY = 1L << 16;
    /** Entry bit: a leaf's source, shared by the jobs counted in the low 16 bits. */
    private static final long SHARED = 1L << 17;

    static final WorkerTable EMPTY = new WorkerTable(new Long2LongHashMap(MISSING), new Long2LongHashMap(MISSING));

    private final Long2LongHashMap entries;
    /** A leaf's sources: {@code jobKey(key(address, port), jobNumber)} to that job's entry. */
    private final Long2LongHashMap shared;

    private WorkerTable(Long2LongHashMap entries, Long2LongHashMap shared) {
        this.entries = entries;
        this.shared = shared;
    }

    /** The key of a source: its address in bits 47..16 and its port in bits 15..0. */
    static long key(int ipv4, int port) {
        return (ipv4 & 0xFFFF_FFFFL) << 16 | (port & 0xFFFF);
    }

    /** The key of a source's part in one job: the job number in bits 55..48 above {@link #key(int, int)}. */
    static long jobKey(long sourceKey, int jobNumber) {
        return (long) (jobNumber & 0xFF) << 48 | sourceKey;
    }

    /**
     * The entry of the source for a packet whose header names {@code jobNumber}: {@link #MISSING} when
     * the source is unknown, {@link #OTHER_JOB} when it is a leaf's that serves no such job. An exact
     * (address, port) entry wins over an any-port one.
     */
    long lookup(int ipv4, int port, int jobNumber) {
        long sourceKey = key(ipv4, port);
        long exact = entries.get(sourceKey);
        if (exact == MISSING) {
            return entries.get(key(ipv4, WorkerEndpoint.ANY_PORT));
        }
        if (exact == OWN_SOURCE) {
            return MISSING;
        }
        if ((exact & SHARED) == 0) {
            return exact;
        }
        long job = shared.get(jobKey(sourceKey, jobNumber));
        return job == MISSING ? OTHER_JOB : job;
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
     * @param own the switch's own sources: no worker's; a worker matched by address alone at the switch's
     *            address gets entries that keep the switch's ports out of its match
     * @throws IllegalStateException    when one of its sources already belongs to a job (a leaf's: to a job
     *                                  that is not a leaf's, or to another rank of the same job)
     * @throws IllegalArgumentException when one of its sources is one of the switch's own
     */
    WorkerTable withJob(JobSpec spec, OwnSources own) {
        Long2LongHashMap copy = new Long2LongHashMap(entries);
        Long2LongHashMap sharedCopy = new Long2LongHashMap(shared);
        for (int rank = 0; rank < spec.workers(); rank++) {
            WorkerEndpoint endpoint = spec.endpoints().get(rank);
            int ipv4 = Ipv4.toInt(endpoint.address());
            if (endpoint.anyPort() && own.ownAddress(endpoint.address())) {
                for (int port : own.ports()) {
                    copy.put(key(ipv4, port), OWN_SOURCE);
                }
            }
            for (int thread = 0; thread < endpoint.threads(); thread++) {
                if (!endpoint.anyPort() && own.own(endpoint.address(), endpoint.port(thread))) {
                    throw new IllegalArgumentException("worker endpoint " + endpoint.address().getHostAddress() + ":"
                            + endpoint.port(thread) + " of job " + spec.jobNumber() + " (rank " + rank + ") is the switch's"
                            + " own address and UDP port (" + own + "): the switch would send the rank's results to itself");
                }
                long entry = (endpoint.anyPort() ? ADDRESS_ONLY : 0) | (long) spec.jobNumber() << 8 | rank;
                long sourceKey = key(ipv4, endpoint.port(thread));
                long previous = endpoint.leaf() ? addShared(copy, sharedCopy, sourceKey, spec.jobNumber(), entry)
                        : copy.put(sourceKey, entry);
                // The same entry again is another thread of a rank whose threads share a port (a leaf's).
                if (previous != MISSING && previous != entry) {
                    String port = endpoint.anyPort() ? "any port" : String.valueOf(endpoint.port(thread));
                    throw new IllegalStateException("worker endpoint " + endpoint.address().getHostAddress() + ":" + port
                            + " of job " + spec.jobNumber() + " already belongs to " + ((previous & SHARED) != 0
                            ? "a leaf switch's jobs" : "job " + jobNumber(previous) + (endpoint.leaf() ? " (not as a"
                            + " leaf switch's, or as another rank)" : "")));
                }
            }
        }
        return new WorkerTable(copy, sharedCopy);
    }

    /**
     * Adds a leaf's source to job {@code jobNumber}: the job's entry goes to the shared map and the source's
     * marker counts one more job. Returns what stood in the way (the source's entry if it is no leaf's, or
     * the job's entry at that source), or {@link #MISSING}.
     */
    private static long addShared(Long2LongHashMap entries, Long2LongHashMap shared, long sourceKey, int jobNumber,
                                  long entry) {
        long marker = entries.get(sourceKey);
        if (marker != MISSING && (marker & SHARED) == 0) {
            return marker;
        }
        long previous = shared.get(jobKey(sourceKey, jobNumber));
        if (previous != MISSING) {
            return previous; // this job has it already: another thread of the rank (equal), or another rank
        }
        shared.put(jobKey(sourceKey, jobNumber), entry);
        entries.put(sourceKey, marker == MISSING ? SHARED | 1 : marker + 1);
        return MISSING;
    }

    /** A copy of this table without the sources of {@code spec} (and the own-source entries its install added). */
    WorkerTable withoutJob(JobSpec spec, OwnSources own) {
        Long2LongHashMap copy = new Long2LongHashMap(entries);
        Long2LongHashMap sharedCopy = new Long2LongHashMap(shared);
        for (WorkerEndpoint endpoint : spec.endpoints()) {
            int ipv4 = Ipv4.toInt(endpoint.address());
            if (endpoint.anyPort()) {
                for (int port : own.ports()) {
                    if (copy.get(key(ipv4, port)) == OWN_SOURCE) {
                        copy.remove(key(ipv4, port));
                    }
                }
            }
            for (int thread = 0; thread < endpoint.threads(); thread++) {
                long sourceKey = key(ipv4, endpoint.port(thread));
                if (!endpoint.leaf()) {
                    copy.remove(sourceKey);
                } else if (sharedCopy.remove(jobKey(sourceKey, spec.jobNumber())) != MISSING) {
                    long marker = copy.get(sourceKey);
                    if ((marker & 0xFFFF) <= 1) {
                        copy.remove(sourceKey);
                    } else {
                        copy.put(sourceKey, marker - 1);
                    }
                }
            }
        }
        return new WorkerTable(copy, sharedCopy);
    }
}
