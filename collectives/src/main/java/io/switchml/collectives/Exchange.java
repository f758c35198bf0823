package io.switchml.collectives;

import java.io.IOException;
import java.util.List;

/**
 * Collective I/O that advances without blocking, so that one thread can send on some links and
 * receive on others at the same time; a {@link Poller} drives it to the end or to its deadline.
 */
interface Exchange {
    /**
     * Reads and writes all it can without blocking, states with {@link Link#want} what it is waiting
     * for, and returns true once it is finished.
     */
    boolean advance() throws IOException;

    /** What it is waiting for now, for a timeout's message, e.g. "rank 2 to send chunk 3 ...". */
    String waitingFor();

    /** The worker ranks it is waiting for now. */
    List<Integer> awaitedRanks();
}
