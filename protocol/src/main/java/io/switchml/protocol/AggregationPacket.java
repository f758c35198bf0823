package io.switchml.protocol;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Flyweight over one SwitchML aggregation packet (the UDP payload) in a {@link ByteBuffer}:
 *
 * <pre>
 * byte 0      msg_type (bits 7..4) | unused by SwitchML, one-round flag here (bit 3) | size code (bits 2..0)
 * byte 1      job_number
 * bytes 2..5  tsi, the worker's packet id (echoed, never interpreted by the switch)
 * bytes 6..7  pool_index, big-endian: bit 15 = set, bits 13..0 = slot
 * byte 8, 9   e0, e1: signed exponents
 * bytes 10..  payload: k x int32, big-endian
 * </pre>
 *
 * A packet carries up to the k elements of its size code; this project's workers send fewer for a
 * tensor's short last block and for packets that carry only exponents (the datagram is then
 * {@link #bytesFor(int)} long, and the switch answers with as many elements). SwitchML's own
 * workers always send k.
 *
 * <p>This project's one-round extension ({@link OneRound}) sets bit 3 of byte 0, which SwitchML
 * leaves unused: the payload then holds raw float32 bit patterns and e0, e1 the operation's tag;
 * the switch's result has the usual form (int32 sums, e0 the block exponent, e1 the flag). With
 * bit 14 of pool_index set too, the payload holds int32 values, which the switch sums as they are.
 *
 * <p>All accessors are absolute (relative to the offset given to {@link #wrap}); they neither move the
 * buffer's position nor allocate, so one instance can be reused for every packet.
 */
public final class AggregationPacket {
    private static final int OFF_TYPE_SIZE = 0;
    private static final int OFF_JOB = 1;
    private static final int OFF_TSI = 2;
    private static final int OFF_POOL_INDEX = 6;
    private static final int OFF_E0 = 8;
    private static final int OFF_E1 = 9;

    private ByteBuffer buffer;
    private int offset;

    /** Points this flyweight at the packet starting at {@code offset} of a big-endian {@code buffer}. */
    public AggregationPacket wrap(ByteBuffer buffer, int offset) {
        if (buffer.order() != ByteOrder.BIG_ENDIAN) {
            throw new IllegalArgumentException("SwitchML packets are big-endian; the buffer is " + buffer.order());
        }
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public ByteBuffer buffer() {
        return buffer;
    }

    public int offset() {
        return offset;
    }

    public int msgType() {
        return (buffer.get(offset + OFF_TYPE_SIZE) >>> 4) & 0x0F;
    }

    public int sizeCode() {
        return buffer.get(offset + OFF_TYPE_SIZE) & 0x07;
    }

    /** True when bit 3 of the first byte, which the protocol leaves unused, is zero. */
    public boolean unusedBitClear() {
        return (buffer.get(offset + OFF_TYPE_SIZE) & 0x08) == 0;
    }

    public AggregationPacket typeAndSize(int msgType, PayloadSize size) {
        buffer.put(offset + OFF_TYPE_SIZE, (byte) ((msgType & 0x0F) << 4 | size.code()));
        return this;
    }

    /** True when bit 3 of the first byte is set: a one-round packet (see {@link OneRound}). */
    public boolean oneRound() {
        return !unusedBitClear();
    }

    /** Sets or clears bit 3 of the first byte, leaving msg_type and size code alone. */
    public AggregationPacket oneRound(boolean oneRound) {
        int first = buffer.get(offset + OFF_TYPE_SIZE);
        buffer.put(offset + OFF_TYPE_SIZE, (byte) (oneRound ? first | 0x08 : first & ~0x08));
        return this;
    }

    public int jobNumber() {
        return buffer.get(offset + OFF_JOB) & 0xFF;
    }

    public AggregationPacket jobNumber(int jobNumber) {
        buffer.put(offset + OFF_JOB, (byte) jobNumber);
        return this;
    }

    /** The worker's packet id as an unsigned 32-bit value held in an int. */
    public int tsi() {
        return buffer.getInt(offset + OFF_TSI);
    }

    public AggregationPacket tsi(int tsi) {
        buffer.putInt(offset + OFF_TSI, tsi);
        return this;
    }

    public int poolIndex() {
        return buffer.getShort(offset + OFF_POOL_INDEX) & 0xFFFF;
    }

    public int slot() {
        return poolIndex() & (ProtocolConstants.MAX_SLOTS - 1);
    }

    /** Which copy of the slot: 0 or 1. */
    public int set() {
        return (poolIndex() & ProtocolConstants.SET_BIT) != 0 ? 1 : 0;
    }

    /** True when bit 14 of pool_index, which the protocol leaves unused, is zero. */
    public boolean poolIndexReservedBitClear() {
        return (poolIndex() & 0x4000) == 0;
    }

    /** True for a one-round packet of int32 values: bit 14 of pool_index (see {@link OneRound}). */
    public boolean oneRoundIntegers() {
        return !poolIndexReservedBitClear();
    }

    /** Sets or clears bit 14 of pool_index, leaving slot and set alone. */
    public AggregationPacket oneRoundIntegers(boolean integers) {
        int index = poolIndex();
        buffer.putShort(offset + OFF_POOL_INDEX, (short) (integers ? index | 0x4000 : index & ~0x4000));
        return this;
    }

    public AggregationPacket poolIndex(int slot, int set) {
        if (slot < 0 || slot >= ProtocolConstants.MAX_SLOTS) {
            throw new IllegalArgumentException("slot " + slot + " outside 0.." + (ProtocolConstants.MAX_SLOTS - 1));
        }
        buffer.putShort(offset + OFF_POOL_INDEX, (short) (slot | (set != 0 ? ProtocolConstants.SET_BIT : 0)));
        return this;
    }

    public int exponent0() {
        return buffer.get(offset + OFF_E0);
    }

    public int exponent1() {
        return buffer.get(offset + OFF_E1);
    }

    public AggregationPacket exponents(int e0, int e1) {
        buffer.put(offset + OFF_E0, (byte) e0);
        buffer.put(offset + OFF_E1, (byte) e1);
        return this;
    }

    public int element(int i) {
        return buffer.getInt(offset + ProtocolConstants.PAYLOAD_OFFSET + i * Integer.BYTES);
    }

    public AggregationPacket element(int i, int value) {
        buffer.putInt(offset + ProtocolConstants.PAYLOAD_OFFSET + i * Integer.BYTES, value);
        return this;
    }

    /** Writes {@code src[0, count)} as payload elements {@code [0, count)}. */
    public void writeElements(int[] src, int count) {
        writeElements(src, 0, count);
    }

    /** Writes {@code src[from, from + count)} as payload elements {@code [0, count)}. */
    public void writeElements(int[] src, int from, int count) {
        ByteBuffer b = buffer;
        int at = offset + ProtocolConstants.PAYLOAD_OFFSET;
        for (int i = 0; i < count; i++) {
            b.putInt(at + i * Integer.BYTES, src[from + i]);
        }
    }

    /** Bytes of a datagram carrying {@code elements} payload elements. */
    public static int bytesFor(int elements) {
        return ProtocolConstants.PAYLOAD_OFFSET + elements * Integer.BYTES;
    }

    /**
     * Payload elements in a datagram of {@code bytes} whose size code allows {@code maxElements}:
     * at least one whole element and at most {@code maxElements}; -1 for any other length.
     */
    public static int elementsIn(int bytes, int maxElements) {
        int payload = bytes - ProtocolConstants.PAYLOAD_OFFSET;
        if (payload < Integer.BYTES || payload % Integer.BYTES != 0 || payload / Integer.BYTES > maxElements) {
            return -1;
        }
        return payload / Integer.BYTES;
    }

    /** Byte index in {@link #buffer()} of payload element {@code i}. */
    public int elementIndex(int i) {
        return offset + ProtocolConstants.PAYLOAD_OFFSET + i * Integer.BYTES;
    }

    /** Writes the fixed part of a packet in one call. */
    public AggregationPacket header(PayloadSize size, int jobNumber, int tsi, int slot, int set, int e0, int e1) {
        return typeAndSize(ProtocolConstants.MSG_TYPE_AGGREGATION, size)
                .jobNumber(jobNumber).tsi(tsi).poolIndex(slot, set).exponents(e0, e1);
    }
}
