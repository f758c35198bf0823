package io.switchml.client;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PacketMac;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;

/**
 * A seeded generator of malformed and spoofed SwitchML datagrams, and the drop counter each one
 * must land in when it reaches the switch from a source outside the worker table.
 *
 * <p>Every datagram is built into {@link #datagram()} (position 0, limit = its length), together
 * with the index of the switch port it is meant for ({@link #portIndex()}).
 */
final class HostileDatagrams {
    /** The largest UDP payload over IPv4. */
    static final int MAX_UDP_PAYLOAD = 65_507;

    /** What a datagram is built to test. */
    enum Kind {
        /** 0..9 bytes: not even header and exponents. */
        TINY,
        /** A well-formed header followed by fewer payload bytes than its size code says. */
        SHORT,
        /** A well-formed header followed by more payload bytes than its size code says (up to 65507 in all). */
        LONG,
        /** Random bytes of a random length (mostly below 2 KiB, some up to 65507). */
        RANDOM,
        /** The right length for its size code, but a msg_type other than 1. */
        WRONG_MSG_TYPE,
        /** The right length, but header bit 3 and/or pool_index bit 14 set. */
        UNUSED_BITS,
        /** Well-formed, for a job number that is not installed. */
        UNKNOWN_JOB,
        /** Well-formed, for the live job, with another size code (and that code's length). */
        WRONG_SIZE,
        /** Well-formed, for the live job and its size, with a slot at or above the job's slot count. */
        SLOT_OUT_OF_RANGE,
        /** Well-formed, for the live job, a valid slot, sent to any switch port. */
        LIVE_SLOT_ANY_PORT,
        /**
         * A perfect contribution: the live job, its size, a valid slot on the port that owns it,
         * either set, a plausible exponent and a random payload. Only the worker table stands
         * between it and the live job's sums.
         */
        SPOOFED_CONTRIBUTION
    }

    /** The live job as the attacker sees it. */
    record Target(int jobNumber, PayloadSize size, int slots, int slotsPerThread, int switchPorts) {
    }

    private final SplittableRandom random;
    private final Target target;
    private final byte[] noise = new byte[2 * 65_536];
    private final ByteBuffer datagram = ByteBuffer.allocateDirect(MAX_UDP_PAYLOAD);
    private final AggregationPacket packet = new AggregationPacket();
    private int portIndex;
    private Kind kind;

    HostileDatagrams(SplittableRandom random, Target target) {
        this.random = random;
        this.target = target;
        random.nextBytes(noise);
        packet.wrap(datagram, 0);
    }

    ByteBuffer datagram() {
        return datagram;
    }

    int portIndex() {
        return portIndex;
    }

    Kind kind() {
        return kind;
    }

    /** Builds the next datagram of a fuzzing burst: any kind but {@link Kind#SPOOFED_CONTRIBUTION}. */
    void nextFuzz() {
        int pick = random.nextInt(100);
        portIndex = random.nextInt(target.switchPorts());
        if (pick < 8) {
            tiny();
        } else if (pick < 18) {
            shortOrLong(true);
        } else if (pick < 25) {
            shortOrLong(false);
        } else if (pick < 40) {
            randomBytes();
        } else if (pick < 48) {
            wrongMsgType();
        } else if (pick < 56) {
            unusedBits();
        } else if (pick < 68) {
            unknownJob();
        } else if (pick < 78) {
            wrongSize();
        } else if (pick < 88) {
            slotOutOfRange();
        } else {
            liveSlot(false);
        }
    }

    /** Builds the next datagram of a spoofing burst: a contribution to the live job that is right in every field. */
    void nextSpoof() {
        liveSlot(true);
    }

    /**
     * The counter that {@code PacketValidator} must increment for this datagram when its source is
     * in no worker table, worked out from the wire format (docs/ARCHITECTURE.md section 2) and the validator's
     * order of checks: length, msg_type, pool_index bit 14 without header bit 3, length against the
     * size code (longer, unless by a tag's whole elements; or not whole elements), then the source. Header bit 3 (the
     * one-round flag, docs/ARCHITECTURE.md section 8) is only checked against the sender's job, which
     * an unknown source has none of. Every datagram that gets past the format checks must stop at the source check.
     */
    static String expectedDrop(ByteBuffer datagram) {
        int length = datagram.remaining();
        if (length == io.switchml.ipc.IpcPoller.DOORBELL_BYTES) {
            return "ipc_wake_ups_received"; // a switch with a shared-memory port takes it as a wake-up, harmlessly
        }
        if (length < ProtocolConstants.PAYLOAD_OFFSET) {
            return "drops_truncated";
        }
        int first = datagram.get(0) & 0xFF;
        if (first >>> 4 != ProtocolConstants.MSG_TYPE_AGGREGATION) {
            return "drops_wrong_msg_type";
        }
        int poolIndex = datagram.getShort(6) & 0xFFFF;
        if ((first & 0x08) == 0 && (poolIndex & 0x4000) != 0) {
            return "drops_unused_bits";
        }
        PayloadSize size = PayloadSize.ofCode(first & 0x07);
        // Whole elements up to a tag's 8 bytes longer than the size code allows may be a packet of a job with
        // authenticated packets (docs/ARCHITECTURE.md section 19), which only the sender's job decides: for a
        // stranger, its source.
        int wholeElements = AggregationPacket.elementsIn(length, size.elements() + PacketMac.TAG_BYTES / Integer.BYTES);
        if (length > size.packetBytes() && (wholeElements < 0 || length > size.packetBytes() + PacketMac.TAG_BYTES)) {
            return "drops_too_long";
        }
        if (wholeElements < 0) {
            return "drops_truncated"; // shorter, and not a short packet of whole elements
        }
        return "drops_unknown_source";
    }

    private void tiny() {
        kind = Kind.TINY;
        fill(random.nextInt(ProtocolConstants.PAYLOAD_OFFSET));
    }

    private void shortOrLong(boolean truncated) {
        PayloadSize size = randomSize();
        int length;
        if (truncated) {
            kind = Kind.SHORT;
            length = ProtocolConstants.PAYLOAD_OFFSET + random.nextInt(size.bytes()); // header complete, payload short
        } else {
            kind = Kind.LONG;
            int room = MAX_UDP_PAYLOAD - size.packetBytes();
            length = size.packetBytes() + 1 + random.nextInt(random.nextInt(4) == 0 ? room : Math.min(room, 256));
        }
        fill(length);
        header(size, random.nextInt(256), random.nextInt(ProtocolConstants.MAX_SLOTS));
    }

    private void randomBytes() {
        kind = Kind.RANDOM;
        int length = random.nextInt(8) == 0 ? random.nextInt(MAX_UDP_PAYLOAD + 1) : random.nextInt(2048);
        fill(length);
        for (int i = 0; i < Math.min(length, 16); i++) {
            datagram.put(i, (byte) random.nextInt()); // fresh random header bytes for every datagram
        }
    }

    private void wrongMsgType() {
        kind = Kind.WRONG_MSG_TYPE;
        PayloadSize size = randomSize();
        fill(size.packetBytes());
        header(size, randomJob(), random.nextInt(target.slots()));
        int msgType = 1 + 1 + random.nextInt(15); // 2..16, 16 standing for 0
        datagram.put(0, (byte) ((msgType & 0x0F) << 4 | datagram.get(0) & 0x0F | random.nextInt(2) << 3));
    }

    private void unusedBits() {
        kind = Kind.UNUSED_BITS;
        PayloadSize size = randomSize();
        fill(size.packetBytes());
        header(size, randomJob(), random.nextInt(target.slots()));
        int which = 1 + random.nextInt(3); // bit 0: header bit 3, bit 1: pool_index bit 14
        if ((which & 1) != 0) {
            datagram.put(0, (byte) (datagram.get(0) | 0x08));
        }
        if ((which & 2) != 0) {
            datagram.put(6, (byte) (datagram.get(6) | 0x40));
        }
    }

    private void unknownJob() {
        kind = Kind.UNKNOWN_JOB;
        int job = random.nextInt(255);
        job = job >= target.jobNumber() ? job + 1 : job; // any number but the live job's
        PayloadSize size = random.nextBoolean() ? target.size() : randomSize();
        fill(size.packetBytes());
        header(size, job, random.nextInt(ProtocolConstants.MAX_SLOTS));
    }

    private void wrongSize() {
        kind = Kind.WRONG_SIZE;
        PayloadSize size;
        do {
            size = randomSize();
        } while (size == target.size());
        fill(size.packetBytes());
        header(size, target.jobNumber(), random.nextInt(target.slots()));
    }

    private void slotOutOfRange() {
        kind = Kind.SLOT_OUT_OF_RANGE;
        fill(target.size().packetBytes());
        int slot = target.slots() + random.nextInt(ProtocolConstants.MAX_SLOTS - target.slots());
        header(target.size(), target.jobNumber(), slot);
    }

    private void liveSlot(boolean onItsPort) {
        kind = onItsPort ? Kind.SPOOFED_CONTRIBUTION : Kind.LIVE_SLOT_ANY_PORT;
        fill(target.size().packetBytes());
        int slot = random.nextInt(target.slots());
        header(target.size(), target.jobNumber(), slot);
        if (onItsPort) {
            portIndex = (slot / target.slotsPerThread()) % target.switchPorts();
            // A plausible block exponent and no "unrepresentable" flag: if the switch applied this
            // packet, the sums would be off by the random payload, not merely flagged.
            packet.exponents(random.nextInt(-24, 25), 0);
        }
    }

    /** Writes a well-formed header (msg_type 1, unused bits clear) over the datagram. */
    private void header(PayloadSize size, int job, int slot) {
        packet.header(size, job, random.nextInt(), slot, random.nextInt(2), random.nextInt(-128, 128),
                random.nextInt(-128, 128));
    }

    /** Sets the datagram to {@code length} bytes of noise. */
    private void fill(int length) {
        datagram.clear();
        datagram.put(noise, random.nextInt(noise.length - length + 1), length);
        datagram.flip();
    }

    private int randomJob() {
        return random.nextInt(4) == 0 ? target.jobNumber() : random.nextInt(256);
    }

    /** Any size code; the 60 KiB one less often, to keep the byte volume moderate. */
    private PayloadSize randomSize() {
        int code = random.nextInt(16);
        return PayloadSize.ofCode(code < 8 ? code : random.nextInt(7));
    }
}
