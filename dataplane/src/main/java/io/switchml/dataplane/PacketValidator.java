package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PacketMac;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import java.nio.ByteBuffer;

/**
 * The parser and the UDP receiver of the switch program: checks a packet against the wire format
 * and the installed tables, and finds its job, rank, slot and set.
 *
 * <p>It also enforces the single-writer rule: slot s of a job is processed only by the receive
 * thread of switch port {@code (s / slotsPerThread) % portCount}, so every slot's registers have
 * one writer and need no lock.
 *
 * <p>The source address and port are the only proof of who sent a packet of a job without authenticated
 * packets: UDP carries no credentials, so a host that can forge a registered worker's source address on the
 * switch's network is taken for that worker. Keeping such hosts off that network (a VLAN per tenant,
 * source-address filtering at the first hop) is the network's job, not this program's; a job with
 * authenticated packets (docs/ARCHITECTURE.md section 19) has the switch program check each packet's tag too.
 */
final class PacketValidator {
    private final int portCount;

    PacketValidator(int portCount) {
        this.portCount = portCount;
    }

    /**
     * Validates the packet in {@code buffer} (bytes position..limit) and fills {@code metadata}.
     *
     * @return why the packet must be dropped, or null when it is valid
     */
    DropReason validate(SwitchTables tables, int sourceIpv4, int sourcePort, int portIndex, ByteBuffer buffer,
                        IngressMetadata metadata) {
        int length = buffer.remaining();
        if (length < ProtocolConstants.PAYLOAD_OFFSET) {
            return DropReason.TRUNCATED;
        }
        AggregationPacket packet = metadata.packet.wrap(buffer, buffer.position());
        if (packet.msgType() != ProtocolConstants.MSG_TYPE_AGGREGATION) {
            return DropReason.WRONG_MSG_TYPE;
        }
        if (!packet.poolIndexReservedBitClear() && !packet.oneRound()) {
            return DropReason.UNUSED_BITS; // pool_index bit 14 means int32 values only in a one-round packet
        }
        PayloadSize size = PayloadSize.ofCode(packet.sizeCode());
        // Whole elements, with or without a tag (a tag is two elements long): which of the two the sender's job
        // decides; anything else is refused here, longer than its size code allows as too long.
        int wholeElements = AggregationPacket.elementsIn(length, size.elements() + PacketMac.TAG_BYTES / Integer.BYTES);
        if (length > size.packetBytes() && (wholeElements < 0 || length > size.packetBytes() + PacketMac.TAG_BYTES)) {
            return DropReason.TOO_LONG;
        }
        if (wholeElements < 0) {
            return DropReason.TRUNCATED;
        }

        long worker = tables.workers().lookup(sourceIpv4, sourcePort, packet.jobNumber());
        if (worker == WorkerTable.OTHER_JOB) {
            return tables.job(packet.jobNumber()) == null ? DropReason.UNKNOWN_JOB : DropReason.JOB_MISMATCH;
        }
        InstalledJob job;
        boolean fromSpine = worker == WorkerTable.MISSING;
        if (fromSpine) {
            // Not a worker: the spine of a leaf's job, by its source and the spine job's number in the header.
            int local = tables.uplinks().localJob(sourceIpv4, sourcePort, packet.jobNumber());
            if (local == UplinkTable.MISSING) {
                return DropReason.UNKNOWN_SOURCE;
            }
            job = tables.job(local);
        } else {
            // A SwitchML worker's job number field is its own short job id, which the switch only echoes.
            if (!WorkerTable.addressOnly(worker)) {
                if (tables.job(packet.jobNumber()) == null) {
                    return DropReason.UNKNOWN_JOB;
                }
                if (WorkerTable.jobNumber(worker) != packet.jobNumber()) {
                    return DropReason.JOB_MISMATCH;
                }
            }
            job = tables.job(WorkerTable.jobNumber(worker));
            if (WorkerTable.addressOnly(worker) && length != size.packetBytes()) {
                return DropReason.TRUNCATED; // short packets are this project's extension, never a SwitchML job's
            }
        }
        if (packet.sizeCode() != job.sizeCode()) {
            return DropReason.SIZE_MISMATCH;
        }
        // An authenticated job's packets end in their tag, which the switch program checks.
        int packetLength = job.spec().authenticated() ? length - PacketMac.TAG_BYTES : length;
        if (packetLength > size.packetBytes()) {
            return DropReason.TOO_LONG;
        }
        // Shorter than the size code's k is a short packet if it holds whole elements, else cut off.
        int elements = AggregationPacket.elementsIn(packetLength, size.elements());
        if (elements < 0) {
            return DropReason.TRUNCATED;
        }
        // Header bit 3 is the one-round flag in jobs that have the mode, and unused (so refused) elsewhere.
        boolean oneRound = packet.oneRound();
        if (oneRound) {
            OneRoundStaging staging = job.oneRoundStaging();
            if (staging == null) {
                return DropReason.UNUSED_BITS;
            }
            if (!packet.oneRoundIntegers() && elements > staging.capacity()) {
                return DropReason.ONE_ROUND_TOO_LONG;
            }
        }
        int slot = packet.slot();
        if (slot >= job.slots()) {
            return DropReason.SLOT_OUT_OF_RANGE;
        }
        int thread = slot / job.slotsPerThread();
        if (thread % portCount != portIndex) {
            return DropReason.WRONG_PORT;
        }

        metadata.job = job;
        metadata.elements = elements;
        metadata.mode = !oneRound ? OneRoundStaging.TWO_ROUNDS
                : packet.oneRoundIntegers() ? OneRoundStaging.ONE_ROUND_INT32 : OneRoundStaging.ONE_ROUND_FLOAT32;
        metadata.rank = fromSpine ? -1 : WorkerTable.rank(worker);
        metadata.fromSpine = fromSpine;
        metadata.slot = slot;
        metadata.set = packet.set();
        metadata.thread = thread;
        return null;
    }
}
