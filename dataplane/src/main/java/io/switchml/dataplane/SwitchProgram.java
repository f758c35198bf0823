package io.switchml.dataplane;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.OneRound;
import io.switchml.protocol.PacketKey;
import io.switchml.protocol.PacketMac;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.kernels.Kernels;
import io.switchml.protocol.kernels.PayloadKernels;
import java.nio.ByteBuffer;

/**
 * The per-packet switch program (docs/ARCHITECTURE.md section 3), the blocks of SwitchML's P4 program in order:
 * drop simulator, parser and worker table ({@link PacketValidator}), this project's
 * {@link RoundChecker}, {@link LengthChecker}, {@link BitmapChecker},
 * {@link WorkersCounter}, {@link Exponents}, {@link Processor}, {@link NextStepSelector}, the
 * {@link Uplink} of a leaf's job (docs/ARCHITECTURE.md section 9), and the egress ({@link ResultSender}).
 *
 * <p>One instance per receive thread; not thread-safe. Constant work per packet, no allocation,
 * no lock: the only shared read is the volatile read of the current {@link SwitchTables}.
 */
final class SwitchProgram {
    private final ControlPlane controlPlane;
    private final PacketValidator validator;
    private final DropSimulator dropSimulator;
    private final SwitchCounters counters;
    private final ResultSender sender;
    private final IngressMetadata metadata = new IngressMetadata();
    private final JobActivity activity = new JobActivity();
    /** This thread's element loops, for the largest packets. */
    private final PayloadKernels kernels;
    /** This thread's tagger and checker of authenticated jobs' packets. */
    private final PacketMac mac = new PacketMac();

    SwitchProgram(ControlPlane controlPlane, int portCount, DropSimulator dropSimulator, SwitchCounters counters,
                  ResultSink sink) {
        this(controlPlane, portCount, dropSimulator, counters, sink, Kernels.create(PayloadSize.B61440.elements()));
    }

    /** A program on the given kernels (for packets of the largest size); the benchmark compares them. */
    SwitchProgram(ControlPlane controlPlane, int portCount, DropSimulator dropSimulator, SwitchCounters counters,
                  ResultSink sink, PayloadKernels kernels) {
        this.kernels = kernels;
        this.controlPlane = controlPlane;
        this.validator = new PacketValidator(portCount);
        this.dropSimulator = dropSimulator;
        this.counters = counters;
        this.sender = new ResultSender(sink, dropSimulator, counters);
    }

    /**
     * Processes one datagram.
     *
     * @param sourceIpv4 the sender's IPv4 address (a.b.c.d as {@code a << 24 | ... | d})
     * @param sourcePort the sender's UDP port
     * @param portIndex  which switch port (0-based) received it
     * @param packet     the UDP payload, bytes position to limit, big-endian and writable: a result
     *                   is written over it in place before it goes to the sink
     * @return what was done with it
     */
    NextStep process(int sourceIpv4, int sourcePort, int portIndex, ByteBuffer packet) {
        return process(sourceIpv4, sourcePort, portIndex, packet, false);
    }

    /**
     * Processes one record of a job's request ring for this port: as a datagram, but only in the name of a worker that
     * reads its results on the job's board; anyone who can write the ring can write any identity.
     */
    NextStep processFromRing(int sourceIpv4, int sourcePort, int portIndex, ByteBuffer packet) {
        return process(sourceIpv4, sourcePort, portIndex, packet, true);
    }

    private NextStep process(int sourceIpv4, int sourcePort, int portIndex, ByteBuffer packet, boolean fromRing) {
        counters.increment(SwitchCounter.PACKETS_RECEIVED);
        if (dropSimulator.dropAtIngress()) {
            counters.increment(SwitchCounter.INGRESS_SIMULATED_DROPS);
            return NextStep.DROP;
        }
        DropReason invalid = validator.validate(controlPlane.tables(), sourceIpv4, sourcePort, portIndex, packet, metadata);
        if (invalid != null) {
            counters.increment(invalid);
            return NextStep.DROP;
        }

        InstalledJob job = metadata.job;
        if (fromRing && (metadata.fromSpine || job.ipcFiles() == null || !job.ipcFiles().results().attached(metadata.rank))) {
            counters.increment(DropReason.NOT_A_RING_WORKER);
            return NextStep.DROP;
        }
        PacketKey key = job.spec().packetKey();
        if (key != null && !mac.verify(packet, packet.position(), packet.remaining(), key, metadata.rank)) {
            counters.increment(DropReason.BAD_TAG);
            return NextStep.DROP;
        }
        AggregationPacket aggregation = metadata.packet;
        int set = metadata.set;
        int slot = metadata.slot;
        if (metadata.fromSpine) {
            return installSpineResult(job, set, slot, aggregation, sourcePort, packet);
        }
        boolean seen = job.bitmapChecker().seen(set, slot, metadata.rank);
        boolean roundComplete = job.workersCounter().complete(set, slot);
        RoundChecker rounds = job.roundChecker();
        if (rounds != null && !rounds.admit(set, slot, aggregation.tsi(), seen, roundComplete)) {
            counters.increment(DropReason.STALE_ROUND);
            return NextStep.DROP;
        }
        boolean soleSender = seen && !roundComplete
                && job.workersCounter().remaining(set, slot) == job.spec().workers() - 1;
        switch (job.lengthChecker().check(set, slot, metadata.elements, roundComplete && !seen,
                metadata.mode == OneRoundStaging.TWO_ROUNDS, soleSender)) {
            case REFUSE -> {
                counters.increment(DropReason.LENGTH_MISMATCH);
                return NextStep.DROP;
            }
            case REOPEN -> {
                // The sender's own packet replaces its earlier contribution of another length.
                job.exponents().apply(set, slot, true, aggregation);
                job.processor().apply(set, slot, true, aggregation, metadata.elements, kernels);
                counters.increment(SwitchCounter.ROUNDS_REOPENED);
                return NextStep.CONSUME;
            }
            case ADMIT -> {
                // On to the bitmap checker.
            }
        }
        boolean retransmission = job.bitmapChecker().update(set, slot, metadata.rank);
        boolean complete;
        if (!retransmission) {
            boolean first = job.workersCounter().count(set, slot);
            OneRoundStaging staging = job.oneRoundStaging();
            int mode = staging == null ? OneRoundStaging.TWO_ROUNDS
                    : staging.contribute(set, slot, metadata.rank, first, metadata.mode, aggregation, metadata.elements,
                            kernels);
            if (mode != OneRoundStaging.ONE_ROUND_FLOAT32) {
                if (mode == OneRoundStaging.TWO_ROUNDS) {
                    job.exponents().apply(set, slot, first, aggregation);
                }
                job.processor().apply(set, slot, first, aggregation, metadata.elements, kernels);
            }
            counters.increment(SwitchCounter.CONTRIBUTIONS);
            complete = job.workersCounter().complete(set, slot);
            if (complete) {
                // Progress, not mere packets: one rank's packets never complete a round of several.
                activity.count(job.spec().jobNumber());
            }
            if (complete && staging != null) {
                completeWithStaging(staging, job, set, slot);
            }
        } else {
            complete = job.workersCounter().complete(set, slot);
        }
        NextStep next = NextStepSelector.select(retransmission, complete);
        Uplink uplink = job.uplink();
        if (uplink != null && (next == NextStep.MULTICAST || next == NextStep.UNICAST && uplink.waiting(set, slot))) {
            // A leaf's local sum is one contribution to the spine; a retransmission while it waits sends it again.
            if (next == NextStep.MULTICAST) {
                uplink.awaitSpine(set, slot, aggregation.tsi());
            }
            writeResult(job, set, slot, aggregation, metadata.elements);
            aggregation.jobNumber(uplink.spineJobNumber());
            sender.toSpine(uplink, metadata.thread, packet);
            return NextStep.FORWARD;
        }
        switch (next) {
            case MULTICAST -> {
                writeResult(job, set, slot, aggregation, metadata.elements);
                sender.multicast(job, metadata.slot, metadata.thread, sourcePort, packet);
            }
            case UNICAST -> {
                writeResult(job, set, slot, aggregation, metadata.elements);
                sender.unicast(job, metadata.rank, metadata.slot, metadata.thread, sourcePort, packet);
            }
            // Past validation, only a retransmission into an incomplete round is dropped.
            case DROP -> counters.increment(SwitchCounter.RETRANSMISSIONS_DROPPED);
            case CONSUME, FORWARD -> {
                // The contribution is in the registers; nothing leaves the switch.
            }
        }
        return next;
    }

    /**
     * The spine's result for a slot copy of a leaf's job: if the copy waits for that round, the global
     * sums and exponents replace its registers (so that later retransmissions are answered from them)
     * and go to every local worker under the local job number; anything else is stale.
     */
    private NextStep installSpineResult(InstalledJob job, int set, int slot, AggregationPacket aggregation,
                                        int sourcePort, ByteBuffer packet) {
        if (!job.uplink().accept(set, slot, aggregation.tsi())) {
            counters.increment(DropReason.STALE_SPINE_RESULT);
            return NextStep.DROP;
        }
        job.exponents().set(set, slot, aggregation.exponent0(), aggregation.exponent1());
        job.processor().apply(set, slot, true, aggregation, metadata.elements, kernels);
        aggregation.jobNumber(job.spec().jobNumber());
        counters.increment(SwitchCounter.SPINE_RESULTS);
        activity.count(job.spec().jobNumber());
        sender.multicast(job, metadata.slot, metadata.thread, sourcePort, packet);
        return NextStep.MULTICAST;
    }

    /**
     * Counts a datagram whose sender has no IPv4 address (on a dual-stack bind): it cannot be in
     * the worker table.
     */
    NextStep dropNonIpv4Source() {
        counters.increment(SwitchCounter.PACKETS_RECEIVED);
        counters.increment(DropReason.UNKNOWN_SOURCE);
        return NextStep.DROP;
    }

    SwitchCounters counters() {
        return counters;
    }

    /** This program's (this port's) count of valid packets per job. */
    JobActivity activity() {
        return activity;
    }

    /** The round of (set, slot) just completed in a job with the one-round mode. */
    private void completeWithStaging(OneRoundStaging staging, InstalledJob job, int set, int slot) {
        staging.complete(set, slot, job.processor(), job.exponents(), kernels);
        if (staging.mismatched(set, slot)) {
            counters.increment(SwitchCounter.MISMATCHED_ROUNDS);
        } else if (staging.oneRound(set, slot)) {
            counters.increment(SwitchCounter.ONE_ROUND_RESULTS);
        }
    }

    /**
     * The header stays the request's (msg_type, size, job, tsi, pool_index); exponents and payload
     * become the result, as long as the request (all contributions of a round have the same length), and in a
     * job with authenticated packets the result's tag replaces the request's.
     * A round whose contributions disagreed (the one-round mode's check) has a poisoned result.
     */
    private void writeResult(InstalledJob job, int set, int slot, AggregationPacket packet, int elements) {
        job.exponents().writeResult(set, slot, packet);
        job.processor().writeResult(set, slot, packet, elements, kernels);
        OneRoundStaging staging = job.oneRoundStaging();
        if (staging != null && staging.mismatched(set, slot)) {
            packet.exponents(packet.exponent0(), OneRound.FLAG_MISMATCH);
            packet.element(0, OneRound.POISON);
        }
        PacketKey key = job.spec().packetKey();
        if (key != null) {
            // Over the request's tag: a result is as long as the request.
            mac.sign(packet.buffer(), packet.offset(), AggregationPacket.bytesFor(elements), key, PacketMac.RESULT);
        }
    }
}
