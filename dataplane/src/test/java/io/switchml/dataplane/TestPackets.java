package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import java.nio.ByteBuffer;
import java.util.Arrays;

/** Builds and reads aggregation packets for tests. */
final class TestPackets {
    private TestPackets() {
    }

    /** A packet whose payload starts with {@code values}, zero-filled to the size. */
    static ByteBuffer packet(PayloadSize size, int jobNumber, int tsi, int slot, int set, int e0, int e1, int... values) {
        ByteBuffer buffer = ByteBuffer.allocate(size.packetBytes());
        AggregationPacket packet = new AggregationPacket().wrap(buffer, 0).header(size, jobNumber, tsi, slot, set, e0, e1);
        for (int i = 0; i < values.length; i++) {
            packet.element(i, values[i]);
        }
        return buffer;
    }

    /** A short packet: only {@code values}, no padding to the size's k elements. */
    static ByteBuffer shortPacket(PayloadSize size, int jobNumber, int tsi, int slot, int set, int e0, int e1, int... values) {
        ByteBuffer buffer = ByteBuffer.allocate(AggregationPacket.bytesFor(values.length));
        AggregationPacket packet = new AggregationPacket().wrap(buffer, 0).header(size, jobNumber, tsi, slot, set, e0, e1);
        for (int i = 0; i < values.length; i++) {
            packet.element(i, values[i]);
        }
        return buffer;
    }

    /** {@code count} copies of {@code value}. */
    static int[] filled(int count, int value) {
        int[] values = new int[count];
        Arrays.fill(values, value);
        return values;
    }

    /** The payload elements of a packet held in {@code bytes}. */
    static int[] elements(byte[] bytes) {
        AggregationPacket packet = wrap(bytes);
        int[] values = new int[(bytes.length - ProtocolConstants.PAYLOAD_OFFSET) / Integer.BYTES]; // short packets too
        for (int i = 0; i < values.length; i++) {
            values[i] = packet.element(i);
        }
        return values;
    }

    static AggregationPacket wrap(byte[] bytes) {
        return new AggregationPacket().wrap(ByteBuffer.wrap(bytes), 0);
    }
}
