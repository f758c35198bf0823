package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/** A {@link ResultSink} that keeps a copy of every datagram it is given. */
final class RecordingSink implements ResultSink {
    /** One datagram: where it went and its bytes. */
    record Sent(InetSocketAddress recipient, byte[] bytes) {
        AggregationPacket packet() {
            return TestPackets.wrap(bytes);
        }

        int[] elements() {
            return TestPackets.elements(bytes);
        }
    }

    private final List<Sent> sent = new ArrayList<>();
    /** What {@link #send} answers: false simulates a full send queue. */
    boolean accepting = true;

    @Override
    public boolean send(InetSocketAddress recipient, ByteBuffer packet) {
        if (!accepting) {
            return false;
        }
        byte[] copy = new byte[packet.remaining()];
        packet.get(packet.position(), copy);
        sent.add(new Sent(recipient, copy));
        return true;
    }

    /** What was sent since the last call. */
    List<Sent> drain() {
        List<Sent> drained = List.copyOf(sent);
        sent.clear();
        return drained;
    }
}
