package io.switchml.agent;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * One local process (a rank) connected to the agent's socket: it says which rank of the launch it is first
 * ({@code RANK R}), then the agent and it speak one line at a time (see {@link Agent}).
 */
final class LocalProcess implements AutoCloseable {
    /** The process's rank in the launch. */
    final int rank;
    /** Its position among the host's ranks: its region of the shared memory, its place in the local sum. */
    final int local;
    private final SocketChannel channel;
    private final BufferedReader in;

    private LocalProcess(int rank, int local, SocketChannel channel, BufferedReader in) {
        this.rank = rank;
        this.local = local;
        this.channel = channel;
        this.in = in;
    }

    /**
     * Reads the connection's {@code RANK R} line: R must be one of {@code ranks} not yet {@code attached}.
     *
     * @throws IllegalStateException when the line is anything else (the connection is closed first)
     */
    static LocalProcess attach(SocketChannel channel, List<Integer> ranks, boolean[] attached) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(Channels.newInputStream(channel), StandardCharsets.UTF_8));
        String line = in.readLine();
        int rank = -1;
        if (line != null && line.startsWith("RANK ")) {
            try {
                rank = Integer.parseInt(line.substring(5).trim());
            } catch (NumberFormatException e) {
                rank = -1;
            }
        }
        int local = ranks.indexOf(rank);
        if (local < 0 || attached[local]) {
            channel.close();
            throw new IllegalStateException("a process connected and said " + (line == null ? "nothing" : "'" + line + "'")
                    + "; expected 'RANK R' with R one of this host's ranks " + ranks + " not yet connected");
        }
        attached[local] = true;
        return new LocalProcess(rank, local, channel, in);
    }

    /** The next line, or null at the end of the stream. */
    String readLine() throws IOException {
        return in.readLine();
    }

    void send(String line) throws IOException {
        AgentLines.send(channel, line);
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // Closing is what we want; a failure to do so changes nothing.
        }
    }
}
