package io.switchml.dataplane;

import io.switchml.protocol.ProtocolConstants;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * One switch port's count of completed rounds per job number (a slot copy that every worker reached,
 * or a spine's result), for the controller's idle check: a job that makes no progress for long is
 * reclaimed, whatever packets one of its ranks, or a stranger spoofing one, keeps sending. One per port thread, so the per-packet count is a
 * plain read and an opaque write of a line no other port writes; the controller reads it opaquely and
 * only compares it with its last reading.
 */
final class JobActivity {
    private final AtomicIntegerArray packets = new AtomicIntegerArray(ProtocolConstants.MAX_JOBS);

    /** Counts a completed round of the job; called by the port's thread only. */
    void count(int jobNumber) {
        packets.setOpaque(jobNumber, packets.getPlain(jobNumber) + 1);
    }

    int get(int jobNumber) {
        return packets.getOpaque(jobNumber);
    }
}
