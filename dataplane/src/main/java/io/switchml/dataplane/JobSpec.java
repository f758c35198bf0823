package io.switchml.dataplane;

import io.switchml.protocol.PacketKey;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A job as the controller installs it on the switch.
 *
 * <p>The job's slots are split evenly between the worker threads: slot s belongs to thread
 * {@code s / slotsPerThread}, on every worker, and the switch sends its results for that slot to
 * the thread's port. Rank r is the position of the worker in {@code endpoints}.
 *
 * @param jobNumber      the 8-bit job number the packets carry, 0..255
 * @param name           a human-readable name, for inspection only
 * @param size           payload size of every packet of the job
 * @param slotsPerThread slots each worker thread uses, at least 1
 * @param threads        worker threads per worker, at least 1; every endpoint has this many ports
 * @param endpoints      the workers in rank order, 1..{@link ProtocolConstants#MAX_WORKERS}
 * @param roundNumbers   whether the workers send each slot's round number as the tsi, as this
 *                       project's workers do; the switch then drops late duplicates of finished
 *                       rounds (see {@code RoundChecker}). False for SwitchML's own workers.
 * @param oneRoundElements the most float32 values one worker thread sends in one round (the
 *                       one-round mode, docs/ARCHITECTURE.md section 8); 0 for none. The switch
 *                       stages n contributions of {@code min(k, oneRoundElements)} values per slot.
 *                       Only for jobs with round numbers.
 * @param packetKey      the key of the job's authenticated packets (docs/ARCHITECTURE.md section 19): every
 *                       contribution carries a tag that the switch checks before it adds, every result gets one;
 *                       null for a job whose packets carry none. Only for jobs with round numbers, whose round
 *                       checker refuses an old round's packet replayed with its valid tag.
 */
public record JobSpec(int jobNumber, String name, PayloadSize size, int slotsPerThread, int threads,
                      List<WorkerEndpoint> endpoints, boolean roundNumbers, int oneRoundElements, PacketKey packetKey) {

    /** A job whose packets carry no tags. */
    public JobSpec(int jobNumber, String name, PayloadSize size, int slotsPerThread, int threads,
                   List<WorkerEndpoint> endpoints, boolean roundNumbers, int oneRoundElements) {
        this(jobNumber, name, size, slotsPerThread, threads, endpoints, roundNumbers, oneRoundElements, null);
    }

    /** A job of this project's workers, which send round numbers, without the one-round mode. */
    public JobSpec(int jobNumber, String name, PayloadSize size, int slotsPerThread, int threads,
                   List<WorkerEndpoint> endpoints) {
        this(jobNumber, name, size, slotsPerThread, threads, endpoints, true);
    }

    /** A job without the one-round mode. */
    public JobSpec(int jobNumber, String name, PayloadSize size, int slotsPerThread, int threads,
                   List<WorkerEndpoint> endpoints, boolean roundNumbers) {
        this(jobNumber, name, size, slotsPerThread, threads, endpoints, roundNumbers, 0);
    }

    public JobSpec {
        if (jobNumber < 0 || jobNumber >= ProtocolConstants.MAX_JOBS) {
            throw new IllegalArgumentException("job number " + jobNumber + " is outside 0.." + (ProtocolConstants.MAX_JOBS - 1));
        }
        if (name == null) {
            throw new IllegalArgumentException("job name is null");
        }
        if (size == null) {
            throw new IllegalArgumentException("payload size of job " + jobNumber + " is null");
        }
        if (slotsPerThread < 1) {
            throw new IllegalArgumentException("slots per thread " + slotsPerThread + " < 1");
        }
        if (threads < 1) {
            throw new IllegalArgumentException("threads " + threads + " < 1");
        }
        if ((long) slotsPerThread * threads > ProtocolConstants.MAX_SLOTS) {
            throw new IllegalArgumentException(slotsPerThread + " slots per thread x " + threads + " threads exceed the "
                    + ProtocolConstants.MAX_SLOTS + " slots pool_index can address");
        }
        if (oneRoundElements < 0) {
            throw new IllegalArgumentException("one-round elements " + oneRoundElements + " < 0");
        }
        if (oneRoundElements > 0 && !roundNumbers) {
            throw new IllegalArgumentException("job " + jobNumber + ": the one-round mode needs workers that send round"
                    + " numbers (this project's); SwitchML's workers have none");
        }
        if (packetKey != null && !roundNumbers) {
            throw new IllegalArgumentException("job " + jobNumber + ": authenticated packets need workers that send round"
                    + " numbers (this project's); SwitchML's workers tag nothing");
        }
        if (packetKey != null && packetKey.size() != size) {
            throw new IllegalArgumentException("job " + jobNumber + ": its packet key is for " + packetKey.size()
                    + " packets, the job's are " + size);
        }
        if (endpoints == null || endpoints.isEmpty()) {
            throw new IllegalArgumentException("job " + jobNumber + " has no workers");
        }
        if (endpoints.size() > ProtocolConstants.MAX_WORKERS) {
            throw new IllegalArgumentException("job " + jobNumber + " has " + endpoints.size() + " workers; at most "
                    + ProtocolConstants.MAX_WORKERS + " fit the seen-bitmap");
        }
        // A source belongs to one rank; one rank's threads may share one (a leaf's switch ports).
        Set<Long> sources = new HashSet<>();
        for (int rank = 0; rank < endpoints.size(); rank++) {
            Set<Long> own = new HashSet<>();
            WorkerEndpoint endpoint = endpoints.get(rank);
            if (endpoint == null) {
                throw new IllegalArgumentException("worker " + rank + " of job " + jobNumber + " is null");
            }
            if (endpoint.threads() != threads) {
                throw new IllegalArgumentException("worker " + rank + " (" + endpoint + ") has " + endpoint.threads()
                        + " ports but the job has " + threads + " threads; it needs one port per thread");
            }
            int ipv4 = Ipv4.toInt(endpoint.address());
            for (int thread = 0; thread < threads; thread++) {
                long source = WorkerTable.key(ipv4, endpoint.port(thread));
                if (own.add(source) && !sources.add(source)) {
                    throw new IllegalArgumentException(endpoint.anyPort()
                            ? endpoint.address().getHostAddress() + " appears twice in job " + jobNumber
                                    + "; workers matched by address alone need an address each"
                            : endpoint.address().getHostAddress() + ":" + endpoint.port(thread) + " appears twice in job "
                                    + jobNumber + "; every worker needs its own addresses and ports");
                }
            }
        }
        endpoints = List.copyOf(endpoints);
    }

    /** Number of workers, n. */
    public int workers() {
        return endpoints.size();
    }

    /** Slots of the job: {@code slotsPerThread * threads}. */
    public int slots() {
        return slotsPerThread * threads;
    }

    /**
     * Register memory of one slot of a job of {@code workers} with packets of {@code size}: two copies of k
     * int32 sums, exponents, a seen-bitmap of ceil(n / 64) longs and a counter, plus the round checker's
     * entries. What admission charges per slot (see {@link SlotPool}).
     */
    public static long slotBytes(PayloadSize size, int workers) {
        long bitmapBytes = (long) Long.BYTES * ((workers + Long.SIZE - 1) / Long.SIZE);
        return 2L * ((long) size.elements() * Integer.BYTES + bitmapBytes + 16);
    }

    /** The job's register memory: its slots, and its one-round staging. */
    public long memoryBytes() {
        return slots() * slotBytes(size, workers()) + oneRoundStagingBytes();
    }

    /** Values the switch stages per contribution to one slot: {@code min(k, oneRoundElements)}; 0 without the mode. */
    public int oneRoundStagingElements() {
        return Math.min(size.elements(), oneRoundElements);
    }

    /** Bytes of one-round staging the job holds: slots x workers x staged values x 4. */
    public long oneRoundStagingBytes() {
        return (long) slots() * workers() * oneRoundStagingElements() * Float.BYTES;
    }

    /** This spec with the one-round mode off. */
    public JobSpec withoutOneRound() {
        return new JobSpec(jobNumber, name, size, slotsPerThread, threads, endpoints, roundNumbers, 0, packetKey);
    }

    /** Whether the job's packets carry tags (see {@link #packetKey()}). */
    public boolean authenticated() {
        return packetKey != null;
    }
}
