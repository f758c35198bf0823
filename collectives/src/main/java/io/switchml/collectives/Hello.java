package io.switchml.collectives;

import java.nio.ByteBuffer;

/**
 * The first message on every connection, sent by both ends: who the sender is and the shape of the
 * job it belongs to. It catches endpoint lists that differ between processes, and strangers.
 *
 * @param role    {@link #WORKER} or {@link #SERVER}
 * @param id      the worker's rank or the server's index
 * @param workers workers in the job
 * @param servers parameter servers in the job (0 for the ring)
 */
record Hello(int role, int id, int workers, int servers) {
    static final int BYTES = 24;
    static final int WORKER = 1;
    static final int SERVER = 2;
    private static final int MAGIC = 0x53574D4C; // "SWML"
    private static final int VERSION = 1;

    ByteBuffer encode() {
        ByteBuffer b = ByteBuffer.allocate(BYTES);
        b.putInt(MAGIC).putInt(VERSION).putInt(role).putInt(id).putInt(workers).putInt(servers);
        return b.flip();
    }

    /** Decodes a full hello; null when the peer does not speak this protocol (magic or version differ). */
    static Hello decode(ByteBuffer b) {
        if (b.getInt(0) != MAGIC || b.getInt(4) != VERSION) {
            return null;
        }
        return new Hello(b.getInt(8), b.getInt(12), b.getInt(16), b.getInt(20));
    }

    String describe() {
        return (role == SERVER ? "server " + id : role == WORKER ? "rank " + id : "role " + role + " id " + id)
                + " of a job with " + workers + " workers and " + servers + " servers";
    }
}
