package io.switchml.dataplane;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Stand-in workers for socket tests: one plain DatagramChannel per worker thread, on 127.0.0.1. */
final class LoopbackWorkers implements AutoCloseable {
    static final InetAddress LOOPBACK = Ipv4.toAddress(0x7F00_0001);

    /** A datagram a worker thread received, and where it came from. */
    record Received(InetSocketAddress from, byte[] bytes) {
        int[] elements() {
            return TestPackets.elements(bytes);
        }
    }

    private final DatagramChannel[][] channels;
    private final Selector[][] selectors;

    LoopbackWorkers(int workers, int threads) {
        channels = new DatagramChannel[workers][threads];
        selectors = new Selector[workers][threads];
        try {
            for (int rank = 0; rank < workers; rank++) {
                for (int thread = 0; thread < threads; thread++) {
                    DatagramChannel channel = DatagramChannel.open().bind(new InetSocketAddress(LOOPBACK, 0));
                    channel.configureBlocking(false);
                    Selector selector = Selector.open();
                    channel.register(selector, SelectionKey.OP_READ);
                    channels[rank][thread] = channel;
                    selectors[rank][thread] = selector;
                }
            }
        } catch (IOException e) {
            close();
            throw new UncheckedIOException(e);
        }
    }

    /** The workers as the switch should know them, in rank order. */
    List<WorkerEndpoint> endpoints() {
        List<WorkerEndpoint> endpoints = new ArrayList<>();
        for (DatagramChannel[] threads : channels) {
            int[] ports = new int[threads.length];
            for (int t = 0; t < threads.length; t++) {
                ports[t] = localPort(threads[t]);
            }
            endpoints.add(new WorkerEndpoint(LOOPBACK, ports));
        }
        return endpoints;
    }

    void send(int rank, int thread, int switchPort, ByteBuffer packet) {
        try {
            channels[rank][thread].send(packet.duplicate(), new InetSocketAddress(LOOPBACK, switchPort));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The next datagram to this worker thread, or null when none arrives within {@code timeout}. */
    Received receive(int rank, int thread, Duration timeout) {
        try {
            ByteBuffer buffer = ByteBuffer.allocate(65536);
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                SocketAddress from = channels[rank][thread].receive(buffer);
                if (from != null) {
                    buffer.flip();
                    byte[] bytes = new byte[buffer.remaining()];
                    buffer.get(bytes);
                    return new Received((InetSocketAddress) from, bytes);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    return null;
                }
                Selector selector = selectors[rank][thread];
                selector.select(Math.max(1, left / 1_000_000));
                selector.selectedKeys().clear();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public void close() {
        for (int rank = 0; rank < channels.length; rank++) {
            for (int thread = 0; thread < channels[rank].length; thread++) {
                closeQuietly(channels[rank][thread]);
                closeQuietly(selectors[rank][thread]);
            }
        }
    }

    private static int localPort(DatagramChannel channel) {
        try {
            return ((InetSocketAddress) channel.getLocalAddress()).getPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void closeQuietly(AutoCloseable closeable) {
        if (closeable != null) {
            try {
                closeable.close();
            } catch (Exception ignored) {
                // Test cleanup: nothing to do about it.
            }
        }
    }
}
