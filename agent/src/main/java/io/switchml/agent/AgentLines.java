package io.switchml.agent;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;

/**
 * The agent and its ranks speak in lines over a Unix-domain socket (see {@link Agent}); either end writes a line whole
 * (several threads write to one socket: the readers' and the completer's answers, the submitters' requests) and lets
 * go of a socket quietly. Each end reads through a stream of its own, which blocks no writer.
 */
final class AgentLines {
    private AgentLines() {
    }

    /** Writes {@code line} and its newline, whole, before any other line to the same socket. */
    static void send(SocketChannel channel, String line) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
        synchronized (channel) {
            while (bytes.hasRemaining()) {
                channel.write(bytes);
            }
        }
    }

    static void close(SocketChannel channel) {
        try {
            channel.close();
        } catch (IOException ignored) {
            // Closing is what we want; a failure to do so changes nothing.
        }
    }

    /** A daemon thread of either end: it must never keep a rank's or the agent's process alive. */
    static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }
}
