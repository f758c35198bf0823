package io.switchml.collectives;

/**
 * What an all-reduce instance has put on the wire: every baseline of this module counts the bytes it
 * writes to TCP connections to other processes (its headers included, TCP/IP's excluded), so a
 * benchmark can report traffic next to time.
 */
public interface BytesSent {
    /**
     * Bytes written so far to connections to other processes: to the other workers and to parameter
     * servers, and, for a worker that hosts a parameter server, that server's results to the other
     * workers. A worker's connection to the server in its own process is not counted (it crosses no link), nor
     * are barriers and broadcasts (not the algorithm's traffic). A hosted server may still be sending an
     * all-reduce's results to the other ranks when this worker's all-reduce returns: read it after a barrier to
     * count an all-reduce whole.
     */
    long bytesSent();
}
