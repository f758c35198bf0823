package io.switchml.collectives;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;

/**
 * The bound TCP port a worker or a parameter server accepts its peers on. To use ephemeral ports,
 * bind port 0 for every rank first, then put the {@link #address()}es in the configuration and pass
 * each listener to {@link Collectives#open(CollectiveConfig, Listener, Listener)}.
 */
public final class Listener implements AutoCloseable {
    private final ServerSocketChannel channel;
    private final InetSocketAddress address;

    private Listener(ServerSocketChannel channel, InetSocketAddress address) {
        this.channel = channel;
        this.address = address;
    }

    public static Listener bind(InetSocketAddress address) {
        try {
            ServerSocketChannel channel = ServerSocketChannel.open();
            try {
                channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
                channel.bind(address, 256);
                return new Listener(channel, (InetSocketAddress) channel.getLocalAddress());
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot listen on " + address + ": " + e.getMessage(), e);
        }
    }

    /** The bound address, with the actual port when port 0 was asked for. */
    public InetSocketAddress address() {
        return address;
    }

    ServerSocketChannel channel() {
        return channel;
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (IOException ignored) {
            // Closing a listener cannot fail in a way anyone could act on.
        }
    }
}
