package io.switchml.collectives;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;

/**
 * A connection being set up, without blocking: finishes the connect (when dialing), then both ends
 * send their {@link Hello} and read the other's.
 */
final class Handshake {
    private final SocketChannel channel;
    private final SelectionKey key;
    private final ByteBuffer out;
    private final ByteBuffer in = ByteBuffer.allocate(Hello.BYTES);

    Handshake(SocketChannel channel, SelectionKey key, Hello self) {
        this.channel = channel;
        this.key = key;
        this.out = self.encode();
    }

    SocketChannel channel() {
        return channel;
    }

    /** Advances; true once both hellos are through. Connection errors are thrown. */
    boolean advance() throws IOException {
        if (channel.isConnectionPending() && !channel.finishConnect()) {
            key.interestOps(SelectionKey.OP_CONNECT);
            return false;
        }
        channel.write(out);
        if (channel.read(in) < 0) {
            throw new EOFException("the peer closed the connection during the handshake");
        }
        key.interestOps((out.hasRemaining() ? SelectionKey.OP_WRITE : 0) | (in.hasRemaining() ? SelectionKey.OP_READ : 0));
        return !out.hasRemaining() && !in.hasRemaining();
    }

    /** The peer's hello once {@link #advance} returned true; null if it does not speak this protocol. */
    Hello peerHello() {
        return Hello.decode(in);
    }

    void close() {
        key.cancel();
        try {
            channel.close();
        } catch (IOException ignored) {
            // Dropping a connection that never became a link.
        }
    }
}
