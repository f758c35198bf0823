package io.switchml.dataplane;

import org.agrona.collections.Long2LongHashMap;

/**
 * Which local job a packet from a spine belongs to: one spine runs many jobs from the same ports,
 * so the key is the source (address, port) and the header's job number, the spine job's
 * (docs/ARCHITECTURE.md section 9). Immutable, published with the {@link SwitchTables} like the
 * worker table.
 */
final class UplinkTable {
    /** Lookup result for a packet that is from no spine of an installed job. */
    static final int MISSING = -1;

    static final UplinkTable EMPTY = new UplinkTable(new Long2LongHashMap(MISSING));

    private final Long2LongHashMap localJobs;

    private UplinkTable(Long2LongHashMap localJobs) {
        this.localJobs = localJobs;
    }

    private static long key(int ipv4, int port, int spineJobNumber) {
        return WorkerTable.jobKey(WorkerTable.key(ipv4, port), spineJobNumber);
    }

    /** The local job whose spine job {@code spineJobNumber} sends from (ipv4, port), or {@link #MISSING}. */
    int localJob(int ipv4, int port, int spineJobNumber) {
        return (int) localJobs.get(key(ipv4, port, spineJobNumber));
    }

    /**
     * A copy with the uplink of local job {@code jobNumber} added.
     *
     * @throws IllegalStateException when another local job already uses that spine job
     */
    UplinkTable withJob(int jobNumber, UplinkSpec uplink) {
        Long2LongHashMap copy = new Long2LongHashMap(localJobs);
        int ipv4 = Ipv4.toInt(uplink.spineAddress());
        for (int port : uplink.spinePorts()) {
            long previous = copy.put(key(ipv4, port, uplink.spineJobNumber()), jobNumber);
            if (previous != MISSING && previous != jobNumber) {
                throw new IllegalStateException("spine job " + uplink.spineJobNumber() + " at "
                        + uplink.spineAddress().getHostAddress() + ":" + port + " already feeds local job " + previous);
            }
        }
        return new UplinkTable(copy);
    }

    /** A copy without that uplink. */
    UplinkTable withoutJob(UplinkSpec uplink) {
        Long2LongHashMap copy = new Long2LongHashMap(localJobs);
        int ipv4 = Ipv4.toInt(uplink.spineAddress());
        for (int port : uplink.spinePorts()) {
            copy.remove(key(ipv4, port, uplink.spineJobNumber()));
        }
        return new UplinkTable(copy);
    }
}
