package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;

/**
 * What the parser and worker table learn about the packet in hand, for the blocks after them (the
 * P4 program's ingress metadata). One instance per receive thread, overwritten by every packet.
 */
final class IngressMetadata {
    /** The packet, wrapped by the validator. */
    final AggregationPacket packet = new AggregationPacket();
    InstalledJob job;
    /** Payload elements in the datagram: the size code's k, or fewer for a short packet. */
    int elements;
    /** Two rounds, or a one-round packet of float32 or int32 values (docs/ARCHITECTURE.md section 8). */
    int mode;
    /** The worker's position in the job; -1 for a packet from the job's spine. */
    int rank;
    /** A leaf's job: the packet is the spine's result, not a worker's contribution (docs/ARCHITECTURE.md section 9). */
    boolean fromSpine;
    int slot;
    int set;
    /** The worker thread that owns the slot: where the result goes on every worker. */
    int thread;
}
