package io.switchml.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class AggregationPacketTest {

    private static final byte CANARY = (byte) 0xA5;

    private static ByteBuffer allocate(boolean direct, int capacity) {
        ByteBuffer b = direct ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity);
        for (int i = 0; i < capacity; i++) {
            b.put(i, CANARY);
        }
        return b;
    }

    private static byte[] bytes(ByteBuffer b, int from, int to) {
        byte[] out = new byte[to - from];
        for (int i = from; i < to; i++) {
            out[i - from] = b.get(i);
        }
        return out;
    }

    // ------------------------------------------------------------------ round trip

    @Property(tries = 300)
    void everyFieldRoundTripsAtAnOffset(
            @ForAll @IntRange(min = 0, max = 15) int msgType,
            @ForAll PayloadSize size,
            @ForAll @IntRange(min = 0, max = 255) int job,
            @ForAll int tsi,
            @ForAll @IntRange(min = 0, max = ProtocolConstants.MAX_SLOTS - 1) int slot,
            @ForAll @IntRange(min = 0, max = 1) int set,
            @ForAll @IntRange(min = -128, max = 127) int e0,
            @ForAll @IntRange(min = -128, max = 127) int e1,
            @ForAll @IntRange(min = 1, max = 61) int offset,
            @ForAll @IntRange(min = 0, max = 7) int tail,
            @ForAll boolean direct,
            @ForAll long seed) {
        int k = size.elements();
        int[] payload = new SplittableRandom(seed).ints(k).toArray();
        // Edge values at the ends of the payload.
        payload[0] = Integer.MIN_VALUE;
        payload[k - 1] = Integer.MAX_VALUE;

        ByteBuffer buf = allocate(direct, offset + size.packetBytes() + tail);
        // A received datagram: the limit is the packet's end (absolute accessors respect it).
        buf.position(3).limit(offset + size.packetBytes());

        AggregationPacket w = new AggregationPacket().wrap(buf, offset);
        w.typeAndSize(msgType, size).jobNumber(job).tsi(tsi).poolIndex(slot, set).exponents(e0, e1);
        for (int i = 0; i < k; i++) {
            w.element(i, payload[i]);
        }

        // A fresh flyweight over a view of the same memory reads every field back.
        AggregationPacket r = new AggregationPacket().wrap(buf.duplicate(), offset);
        assertThat(r.offset()).isEqualTo(offset);
        assertThat(r.msgType()).isEqualTo(msgType);
        assertThat(r.sizeCode()).isEqualTo(size.code());
        assertThat(PayloadSize.ofCode(r.sizeCode())).isSameAs(size);
        assertThat(r.unusedBitClear()).isTrue();
        assertThat(r.jobNumber()).isEqualTo(job);
        assertThat(r.tsi()).isEqualTo(tsi);
        assertThat(r.slot()).isEqualTo(slot);
        assertThat(r.set()).isEqualTo(set);
        assertThat(r.poolIndex()).isEqualTo(slot | set << 15);
        assertThat(r.poolIndexReservedBitClear()).isTrue();
        assertThat(r.exponent0()).isEqualTo(e0);
        assertThat(r.exponent1()).isEqualTo(e1);
        int[] back = new int[k];
        for (int i = 0; i < k; i++) {
            back[i] = r.element(i);
        }
        assertThat(back).isEqualTo(payload);

        // Accessors are absolute: position and limit are untouched.
        assertThat(buf.position()).isEqualTo(3);
        assertThat(buf.limit()).isEqualTo(offset + size.packetBytes());
        // Nothing outside [offset, offset + packetBytes) was written.
        for (int i = 0; i < offset; i++) {
            assertThat(buf.get(i)).as("byte %d before the packet", i).isEqualTo(CANARY);
        }
        buf.clear();
        for (int i = offset + size.packetBytes(); i < buf.capacity(); i++) {
            assertThat(buf.get(i)).as("byte %d after the packet", i).isEqualTo(CANARY);
        }
    }

    @Property(tries = 200)
    void headerWritesTheSameBytesAsTheSingleSetters(
            @ForAll PayloadSize size,
            @ForAll @IntRange(min = 0, max = 255) int job,
            @ForAll int tsi,
            @ForAll @IntRange(min = 0, max = ProtocolConstants.MAX_SLOTS - 1) int slot,
            @ForAll @IntRange(min = 0, max = 1) int set,
            @ForAll @IntRange(min = -128, max = 127) int e0,
            @ForAll @IntRange(min = -128, max = 127) int e1,
            @ForAll boolean direct) {
        int offset = 5;
        ByteBuffer a = allocate(direct, offset + ProtocolConstants.PAYLOAD_OFFSET);
        ByteBuffer b = allocate(!direct, offset + ProtocolConstants.PAYLOAD_OFFSET);
        new AggregationPacket().wrap(a, offset).header(size, job, tsi, slot, set, e0, e1);
        // The single setters in the reverse order: no setter clobbers a neighbouring field.
        new AggregationPacket().wrap(b, offset)
                .exponents(e0, e1).poolIndex(slot, set).tsi(tsi).jobNumber(job)
                .typeAndSize(ProtocolConstants.MSG_TYPE_AGGREGATION, size);
        assertThat(bytes(a, 0, a.capacity())).isEqualTo(bytes(b, 0, b.capacity()));
        assertThat(new AggregationPacket().wrap(a, offset).msgType()).isEqualTo(ProtocolConstants.MSG_TYPE_AGGREGATION);
    }

    @Property(tries = 100)
    void oneFlyweightCanBeReusedForManyPackets(
            @ForAll @IntRange(min = 0, max = ProtocolConstants.MAX_SLOTS - 1) int slotA,
            @ForAll @IntRange(min = 0, max = ProtocolConstants.MAX_SLOTS - 1) int slotB,
            @ForAll int tsiA,
            @ForAll int tsiB) {
        ByteBuffer buf = ByteBuffer.allocate(2 * PayloadSize.B128.packetBytes());
        int second = PayloadSize.B128.packetBytes();
        AggregationPacket p = new AggregationPacket();
        p.wrap(buf, 0).header(PayloadSize.B128, 1, tsiA, slotA, 0, 3, 0);
        p.wrap(buf, second).header(PayloadSize.B128, 2, tsiB, slotB, 1, -4, 1);

        assertThat(p.wrap(buf, 0).slot()).isEqualTo(slotA);
        assertThat(p.tsi()).isEqualTo(tsiA);
        assertThat(p.set()).isZero();
        assertThat(p.jobNumber()).isEqualTo(1);
        assertThat(p.wrap(buf, second).slot()).isEqualTo(slotB);
        assertThat(p.tsi()).isEqualTo(tsiB);
        assertThat(p.set()).isOne();
        assertThat(p.exponent0()).isEqualTo(-4);
        assertThat(p.buffer()).isSameAs(buf);
    }

    // ------------------------------------------------------------------ byte-exact layout

    /** A B128 packet: msg_type 1, job 0xAB, tsi 0x12345678, slot 0x1234 in set 1, e0 -3, e1 1. */
    private static byte[] handWrittenPacket() {
        byte[] expected = new byte[ProtocolConstants.PAYLOAD_OFFSET + 128];
        byte[] head = {
                (byte) 0x10,                                     // msg_type 1 << 4 | size code 0
                (byte) 0xAB,                                     // job_number
                (byte) 0x12, (byte) 0x34, (byte) 0x56, (byte) 0x78, // tsi, big-endian
                (byte) 0x92, (byte) 0x34,                        // pool_index: set bit 15 | slot 0x1234
                (byte) 0xFD,                                     // e0 = -3
                (byte) 0x01,                                     // e1 = 1
                (byte) 0x01, (byte) 0x02, (byte) 0x03, (byte) 0x04, // element 0 = 0x01020304
                (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFE, // element 1 = -2
                (byte) 0x80, (byte) 0x00, (byte) 0x00, (byte) 0x00, // element 2 = Integer.MIN_VALUE
                (byte) 0x7F, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, // element 3 = Integer.MAX_VALUE
        };
        System.arraycopy(head, 0, expected, 0, head.length);
        // element 31 (the last) = 0x00C0FFEE
        int last = ProtocolConstants.PAYLOAD_OFFSET + 31 * 4;
        expected[last] = 0x00;
        expected[last + 1] = (byte) 0xC0;
        expected[last + 2] = (byte) 0xFF;
        expected[last + 3] = (byte) 0xEE;
        return expected;
    }

    @Test
    void encodesTheSwitchMlLayoutByteForByte() {
        for (boolean direct : new boolean[] {false, true}) {
            int offset = 7;
            ByteBuffer buf = direct ? ByteBuffer.allocateDirect(offset + 138) : ByteBuffer.allocate(offset + 138);
            AggregationPacket p = new AggregationPacket().wrap(buf, offset)
                    .header(PayloadSize.B128, 0xAB, 0x12345678, 0x1234, 1, -3, 1);
            p.element(0, 0x01020304).element(1, -2).element(2, Integer.MIN_VALUE).element(3, Integer.MAX_VALUE)
                    .element(31, 0x00C0FFEE);
            assertThat(bytes(buf, offset, offset + 138)).as("direct=%s", direct).isEqualTo(handWrittenPacket());
            assertThat(p.elementIndex(0)).isEqualTo(offset + 10);
            assertThat(p.elementIndex(31)).isEqualTo(offset + 10 + 124);
        }
    }

    @Test
    void decodesTheSwitchMlLayoutByteForByte() {
        byte[] raw = handWrittenPacket();
        byte[] shifted = new byte[raw.length + 3];
        System.arraycopy(raw, 0, shifted, 3, raw.length);
        AggregationPacket p = new AggregationPacket().wrap(ByteBuffer.wrap(shifted), 3);
        assertThat(p.msgType()).isEqualTo(1);
        assertThat(p.sizeCode()).isZero();
        assertThat(p.jobNumber()).isEqualTo(0xAB);
        assertThat(p.tsi()).isEqualTo(0x12345678);
        assertThat(p.poolIndex()).isEqualTo(0x9234);
        assertThat(p.slot()).isEqualTo(0x1234);
        assertThat(p.set()).isOne();
        assertThat(p.exponent0()).isEqualTo(-3);
        assertThat(p.exponent1()).isEqualTo(1);
        assertThat(p.element(0)).isEqualTo(0x01020304);
        assertThat(p.element(1)).isEqualTo(-2);
        assertThat(p.element(2)).isEqualTo(Integer.MIN_VALUE);
        assertThat(p.element(3)).isEqualTo(Integer.MAX_VALUE);
        assertThat(p.element(4)).isZero();
        assertThat(p.element(31)).isEqualTo(0x00C0FFEE);
        assertThat(p.unusedBitClear()).isTrue();
        assertThat(p.poolIndexReservedBitClear()).isTrue();
    }

    @Test
    void firstByteHoldsMsgTypeHighAndSizeCodeLow() {
        ByteBuffer buf = ByteBuffer.allocate(1 + ProtocolConstants.PAYLOAD_OFFSET);
        AggregationPacket p = new AggregationPacket().wrap(buf, 1);
        for (PayloadSize s : PayloadSize.values()) {
            for (int type = 0; type < 16; type++) {
                p.typeAndSize(type, s);
                assertThat(buf.get(1) & 0xFF).isEqualTo(type << 4 | s.code());
                assertThat(p.msgType()).isEqualTo(type);
                assertThat(p.sizeCode()).isEqualTo(s.code());
                assertThat(p.unusedBitClear()).isTrue();
            }
        }
        p.typeAndSize(15, PayloadSize.B61440);
        assertThat(buf.get(1)).isEqualTo((byte) 0xF7);
    }

    @Test
    void tsiIsUnsignedOnTheWire() {
        ByteBuffer buf = ByteBuffer.allocate(ProtocolConstants.PAYLOAD_OFFSET);
        AggregationPacket p = new AggregationPacket().wrap(buf, 0).tsi(0xFFFFFFFE);
        assertThat(bytes(buf, 2, 6)).containsExactly(0xFF, 0xFF, 0xFF, 0xFE);
        assertThat(Integer.toUnsignedLong(p.tsi())).isEqualTo(0xFFFFFFFEL);
    }

    @Test
    void jobNumberAbove127ReadsBackUnsigned() {
        ByteBuffer buf = ByteBuffer.allocate(ProtocolConstants.PAYLOAD_OFFSET);
        AggregationPacket p = new AggregationPacket().wrap(buf, 0);
        for (int job = 0; job < ProtocolConstants.MAX_JOBS; job++) {
            p.jobNumber(job);
            assertThat(p.jobNumber()).isEqualTo(job);
            assertThat(buf.get(1) & 0xFF).isEqualTo(job);
        }
    }

    @Test
    void exponentsAreSignedBytes() {
        ByteBuffer buf = ByteBuffer.allocate(ProtocolConstants.PAYLOAD_OFFSET);
        AggregationPacket p = new AggregationPacket().wrap(buf, 0);
        p.exponents(-128, 127);
        assertThat(buf.get(8)).isEqualTo((byte) 0x80);
        assertThat(buf.get(9)).isEqualTo((byte) 0x7F);
        assertThat(p.exponent0()).isEqualTo(-128);
        assertThat(p.exponent1()).isEqualTo(127);
        // Every block exponent and flag the quantizer produces fits.
        for (int e = BlockQuantizer.MIN_EXPONENT; e <= BlockQuantizer.MAX_EXPONENT; e++) {
            p.exponents(e, BlockQuantizer.FLAG_UNREPRESENTABLE);
            assertThat(p.exponent0()).isEqualTo(e);
            assertThat(p.exponent1()).isEqualTo(BlockQuantizer.FLAG_UNREPRESENTABLE);
        }
    }

    // ------------------------------------------------------------------ pool_index

    @Test
    void poolIndexPutsTheSetInBit15AndTheSlotInBits13To0() {
        ByteBuffer buf = ByteBuffer.allocate(ProtocolConstants.PAYLOAD_OFFSET);
        AggregationPacket p = new AggregationPacket().wrap(buf, 0);
        p.poolIndex(ProtocolConstants.MAX_SLOTS - 1, 1);
        assertThat(bytes(buf, 6, 8)).containsExactly(0xBF, 0xFF);
        assertThat(p.slot()).isEqualTo(16383);
        assertThat(p.set()).isOne();
        p.poolIndex(0, 0);
        assertThat(bytes(buf, 6, 8)).containsExactly(0x00, 0x00);
        p.poolIndex(1, 0);
        assertThat(bytes(buf, 6, 8)).containsExactly(0x00, 0x01);
        p.poolIndex(0, 1);
        assertThat(bytes(buf, 6, 8)).containsExactly(0x80, 0x00);
        assertThat(p.slot()).isZero();
        assertThat(p.set()).isOne();
    }

    @Test
    void slotOutsideFourteenBitsIsRejectedAndNothingIsWritten() {
        ByteBuffer buf = allocate(false, ProtocolConstants.PAYLOAD_OFFSET);
        AggregationPacket p = new AggregationPacket().wrap(buf, 0);
        for (int bad : new int[] {-1, ProtocolConstants.MAX_SLOTS, ProtocolConstants.MAX_SLOTS + 1, 0x8000,
                Integer.MAX_VALUE, Integer.MIN_VALUE}) {
            assertThatThrownBy(() -> p.poolIndex(bad, 0))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining(String.valueOf(bad))
                    .hasMessageContaining("0..16383");
            assertThatThrownBy(() -> p.header(PayloadSize.B256, 1, 0, bad, 1, 0, 0))
                    .isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(bytes(buf, 6, 8)).containsExactly(CANARY, CANARY);
    }

    @Test
    void reservedAndUnusedBitsAreDetected() {
        ByteBuffer buf = ByteBuffer.allocate(ProtocolConstants.PAYLOAD_OFFSET);
        AggregationPacket p = new AggregationPacket().wrap(buf, 0).header(PayloadSize.B1024, 9, 1, 77, 1, 0, 0);
        assertThat(p.unusedBitClear()).isTrue();
        assertThat(p.poolIndexReservedBitClear()).isTrue();

        // Bit 3 of byte 0: the packet's other fields still decode.
        buf.put(0, (byte) (buf.get(0) | 0x08));
        assertThat(p.unusedBitClear()).isFalse();
        assertThat(p.msgType()).isEqualTo(1);
        assertThat(p.sizeCode()).isEqualTo(PayloadSize.B1024.code());

        // Bit 14 of pool_index (bit 6 of byte 6): slot and set ignore it.
        buf.put(6, (byte) (buf.get(6) | 0x40));
        assertThat(p.poolIndexReservedBitClear()).isFalse();
        assertThat(p.slot()).isEqualTo(77);
        assertThat(p.set()).isOne();
        assertThat(p.poolIndex()).isEqualTo(0x8000 | 0x4000 | 77);

        // Rewriting the fields clears both again.
        p.header(PayloadSize.B1024, 9, 1, 77, 1, 0, 0);
        assertThat(p.unusedBitClear()).isTrue();
        assertThat(p.poolIndexReservedBitClear()).isTrue();
    }

    @Property(tries = 200)
    void reservedBitsNeverLeakIntoTheDecodedFields(@ForAll byte first, @ForAll short poolIndex) {
        ByteBuffer buf = ByteBuffer.allocate(ProtocolConstants.PAYLOAD_OFFSET);
        buf.put(0, first).putShort(6, poolIndex);
        AggregationPacket p = new AggregationPacket().wrap(buf, 0);
        assertThat(p.msgType()).isBetween(0, 15).isEqualTo((first & 0xF0) >>> 4);
        assertThat(p.sizeCode()).isBetween(0, 7).isEqualTo(first & 0x07);
        assertThat(p.unusedBitClear()).isEqualTo((first & 0x08) == 0);
        assertThat(p.slot()).isBetween(0, ProtocolConstants.MAX_SLOTS - 1).isEqualTo(poolIndex & 0x3FFF);
        assertThat(p.set()).isEqualTo((poolIndex & 0x8000) != 0 ? 1 : 0);
        assertThat(p.poolIndexReservedBitClear()).isEqualTo((poolIndex & 0x4000) == 0);
        assertThat(p.poolIndex()).isEqualTo(poolIndex & 0xFFFF);
    }

    @Test
    void readsAPacketAtTheEndOfABufferExactlyItsSize() {
        for (PayloadSize s : PayloadSize.values()) {
            ByteBuffer buf = ByteBuffer.allocateDirect(s.packetBytes());
            AggregationPacket p = new AggregationPacket().wrap(buf, 0).header(s, 3, 4, 5, 0, 6, 0);
            p.element(s.elements() - 1, -7);
            assertThat(p.element(s.elements() - 1)).isEqualTo(-7);
            assertThat(p.elementIndex(s.elements() - 1) + Integer.BYTES).isEqualTo(s.packetBytes());
            assertThatThrownBy(() -> p.element(s.elements(), 1)).isInstanceOf(IndexOutOfBoundsException.class);
            assertThat(Arrays.asList(p.sizeCode(), p.slot(), p.exponent0())).containsExactly(s.code(), 5, 6);
        }
    }
}
