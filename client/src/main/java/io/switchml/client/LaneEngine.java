package io.switchml.client;

import io.switchml.api.AllReduceTimeoutException;
import io.switchml.api.MismatchedOperationException;
import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.PacketKey;
import io.switchml.protocol.PacketMac;
import io.switchml.protocol.PayloadCodec;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import io.switchml.protocol.SlotRounds;
import io.switchml.protocol.SlotSchedule;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One worker thread's protocol engine (docs/ARCHITECTURE.md section 4): its range of slots in the
 * switch and the self-clocked window over them, with no I/O. It is given time and packets as
 * arguments ({@link #submit}, {@link #onResult}, {@link #tick}) and emits packets to a
 * {@link Transport}; the transport's event loop calls it, always from one thread, so nothing here is
 * shared or locked. {@link WorkerLane} drives it over UDP (Netty) and the switch's shared-memory port.
 *
 * <p>For each task the engine queues the first packet of every slot; the result for a slot queues
 * that slot's next packet, in the other set. Queued packets go out lowest packet number first while
 * fewer than the congestion window ({@link CongestionWindow}; all granted slots when congestion
 * control is off) are in flight. A slot completes only when every worker sent its packet, so a
 * window could deadlock the job: each worker's window full of packets the others hold back. Hence
 * the lowest packet a worker has not finished always goes out, window or not: that packet is also
 * every other worker's lowest unfinished one (each of them got the result before it in that slot),
 * so all send it and it completes, and the job always makes progress. Loss is found by the
 * {@link LossDetector} (RACK and a retransmission timeout); a lost packet delays only its own slot.
 */
final class LaneEngine {
    /** How often the transport ticks a busy engine; retransmission timeouts are multiples of this at best. */
    static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /**
     * The retransmission timeout's floor on the switch's shared-memory port, where only a packet the
     * full request ring refused is ever missing, and a late result means a busy host, not a loss.
     */
    static final long SHARED_MEMORY_RETRANSMIT_MIN_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

    /** Where the engine's packets go, and its clock: the business of the event loop that drives it. */
    interface Transport {
        /**
         * Sends window slot {@code slot}'s packet: bytes 0..length-1 of {@code packet}, which stay as they are until
         * the slot's result arrives (a resend sends the same buffer again). May hold it until {@link #flush}.
         */
        void send(int slot, ByteBuffer packet, int length);

        /** Puts what {@link #send} held on the wire. */
        void flush();

        /** Whether the engine needs {@link #tick} about every {@link #TICK_NANOS}: from a task's start until it is idle. */
        void ticks(boolean needed);
    }

    /** Told when the engine gave up on a task; the context is no longer consistent with the switch. */
    interface FailureHandler {
        void laneFailed(RuntimeException error);
    }

    /** What a stopped engine held: its running task with the blocks whose results arrived, and its queue. */
    record Snapshot(LaneTask running, BitSet runningHeld, List<LaneTask> queued) {
    }

    private final int index;
    private final int slotBase;
    private final int window;
    private final PayloadSize size;
    private final int k;
    private final int jobNumber;
    private final long operationTimeoutNanos;
    private final WorkerStatistics statistics;
    private final FailureHandler failures;
    private final Transport transport;
    /** No result for this long while packets are outstanding makes the lane report silence (0: never; no listener). */
    private final long silenceNanos;
    private final Runnable silenceListener;
    /** Whether the transport ticks this engine: while a task runs, so that a waiting job wakes nobody. */
    private boolean ticking;

    private final SlotRounds rounds;
    /**
     * Per window slot: the packet it waits for the result of or is queued to send (-1: none), and its
     * round (sent as the tsi; its parity is the set) once sent.
     */
    private final int[] pending;
    private final int[] pendingRound;
    /** Per window slot: max exponent and flag of the block the slot sends next (from the bootstrap). */
    private final byte[] nextExponent;
    private final byte[] nextFlag;
    /**
     * With zero-block skipping: per block of the running task, the largest magnitude bits of this
     * worker's block, or -1 until computed; each block is read once for its exponent and for the
     * reports on blocks ahead. Grown when a task has more blocks, never shrunk.
     */
    private int[] blockBits = new int[0];

    private final LossDetector loss;
    /** Null when congestion control is off: then every granted slot may be in flight. */
    private final CongestionWindow congestion;
    /** Slots whose next packet waits for room in the window, lowest packet first. */
    private final ReadySlots ready;
    private int inFlight;
    /** Scratch for the slots the loss detector finds lost. */
    private final int[] lost;
    private final ArrayDeque<LaneTask> queue = new ArrayDeque<>();
    /**
     * Per window slot: the packet it sends, encoded once and resent as it is. A result for the slot
     * proves the packet arrived, and only then is the buffer rewritten; a copy of the old packet still
     * queued in the transport would go out with the new bytes, which is just an early duplicate.
     */
    private final ByteBuffer[] txBuffers;
    /** The memory every slot's packet buffer is a slice of. */
    private final ByteBuffer txMemory;
    private final AggregationPacket[] txPackets;
    /** Per window slot: bytes of its packet, short for a short last block or a packet of exponents only. */
    private final int[] txBytes;
    private final AggregationPacket rx = new AggregationPacket();
    private final PayloadCodec codec;
    /** The job's packet key, and this thread's tagger; null for a job without authenticated packets. */
    private final PacketKey packetKey;
    private final PacketMac mac;
    /** Bytes of the tag after each packet: {@link PacketMac#TAG_BYTES} or 0. */
    private final int tagBytes;
    /** Whose packets these are, in the tags: the rank this worker joined the switch's job as. */
    private final int origin;

    private LaneTask current;
    private int activeSlots;
    private long deadline;
    /** When a result of the running task last arrived (or the task started): silence counts from here. */
    private long lastResultAt;
    private boolean silenceReported;
    /** Set by {@link #stop()}: the lane sends and accepts nothing more. */
    private boolean stopped;

    /** The time of the event being handled (a submission, a result, a tick). */
    private long now;

    /**
     * @param sharedMemory whether the transport leads to the switch's shared-memory port, which loses nothing and
     *                     reorders: loss is then found by a long timeout alone
     */
    LaneEngine(int index, int window, PayloadSize size, int jobNumber, SwitchMLConfig config, boolean congestionControl,
               boolean sharedMemory, WorkerStatistics statistics, FailureHandler failures, Runnable silenceListener,
               Transport transport) {
        this(index, window, size, jobNumber, config, congestionControl, sharedMemory, statistics, failures, silenceListener,
                transport, null);
    }

    /**
     * @param packetKey the key of the job's authenticated packets (docs/ARCHITECTURE.md section 19): every packet
     *                  goes out with its tag, and a result whose tag is wrong is counted and dropped; null when the
     *                  job's packets carry no tags
     */
    LaneEngine(int index, int window, PayloadSize size, int jobNumber, SwitchMLConfig config, boolean congestionControl,
               boolean sharedMemory, WorkerStatistics statistics, FailureHandler failures, Runnable silenceListener,
               Transport transport, PacketKey packetKey) {
        this.packetKey = packetKey;
        this.mac = packetKey == null ? null : new PacketMac();
        this.tagBytes = packetKey == null ? 0 : PacketMac.TAG_BYTES;
        this.origin = config.rank();
        this.index = index;
        this.slotBase = index * window;
        this.window = window;
        this.size = size;
        this.k = size.elements();
        this.codec = new PayloadCodec(k);
        this.jobNumber = jobNumber;
        this.operationTimeoutNanos = config.operationTimeout().toNanos();
        this.statistics = statistics;
        this.failures = failures;
        this.transport = transport;
        this.silenceNanos = silenceListener == null ? 0 : config.failoverDetection().toNanos();
        this.silenceListener = silenceListener;
        this.rounds = new SlotRounds(window);
        this.pending = new int[window];
        this.pendingRound = new int[window];
        this.nextExponent = new byte[window];
        this.nextFlag = new byte[window];
        SwitchMLConfig.LossRecovery recovery = config.lossRecovery();
        long retransmitMin = sharedMemory ? Math.max(SHARED_MEMORY_RETRANSMIT_MIN_NANOS, recovery.retransmitMin().toNanos())
                : recovery.retransmitMin().toNanos();
        this.loss = new LossDetector(window, new RetransmissionTimeout(retransmitMin,
                Math.max(retransmitMin, recovery.retransmitInitial().toNanos()),
                Math.max(retransmitMin, recovery.retransmitMax().toNanos())), !sharedMemory);
        this.congestion = congestionControl ? new CongestionWindow(window, config.congestion().initialWindow(),
                config.congestion().targetDelay().toNanos()) : null;
        this.ready = new ReadySlots(window);
        this.lost = new int[window];
        if (congestion != null) {
            statistics.congestionWindow = congestion.window();
        }
        this.txBuffers = new ByteBuffer[window];
        this.txPackets = new AggregationPacket[window];
        this.txBytes = new int[window];
        int packetBytes = size.packetBytes() + tagBytes;
        this.txMemory = ByteBuffer.allocateDirect(window * packetBytes);
        for (int i = 0; i < window; i++) {
            ByteBuffer slot = txMemory.slice(i * packetBytes, packetBytes).order(ByteOrder.BIG_ENDIAN);
            txPackets[i] = new AggregationPacket().wrap(slot, 0);
            txBuffers[i] = slot;
        }
        Arrays.fill(pending, -1);
    }

    int index() {
        return index;
    }

    /** Slot {@code slot}'s packet buffer (direct, big-endian), for a transport that wraps it once. */
    ByteBuffer packetBuffer(int slot) {
        return txBuffers[slot];
    }

    /** Whether a task is running or queued. */
    boolean busy() {
        return current != null || !queue.isEmpty();
    }

    /** Queues a task, at {@code now}; it starts at once when the engine is idle. */
    void submit(LaneTask task, long now) {
        this.now = now;
        queue.add(task);
        if (current == null && !stopped) {
            startNext();
        }
    }

    /** Fails every queued and running task with {@code error}. */
    void abortAll(RuntimeException error) {
        if (current != null) {
            current.operation.fail(error);
            reset();
        }
        for (LaneTask t; (t = queue.poll()) != null; ) {
            t.operation.fail(error);
        }
    }

    /**
     * Stops the engine for a failover, without failing its tasks: no more packets go out, results
     * and ticks are ignored, and the answer says which blocks of the running task this worker
     * already holds and which tasks were still queued.
     */
    Snapshot stop() {
        stopped = true;
        stopTimer();
        BitSet held = current == null ? null : heldBlocks(current);
        Snapshot s = new Snapshot(current, held, new ArrayList<>(queue));
        queue.clear();
        reset();
        return s;
    }

    /**
     * A datagram from the switch, at {@code now}: {@code packet}'s bytes from its position to its limit, read in
     * place (its position, limit and byte order may change). Anything but the result of a packet this engine has
     * in flight is counted and dropped. Packets it sends in answer are held until the transport's next flush.
     */
    void onResult(ByteBuffer packet, long now) {
        this.now = now;
        int length = packet.remaining();
        statistics.packetsReceived.increment();
        statistics.bytesReceived.add(length);
        if (AggregationPacket.elementsIn(length - tagBytes, k) < 0) {
            statistics.malformedResults.increment();
            return;
        }
        rx.wrap(packet.order(ByteOrder.BIG_ENDIAN), packet.position());
        int slot = rx.slot();
        if (rx.msgType() != ProtocolConstants.MSG_TYPE_AGGREGATION || rx.jobNumber() != jobNumber
                || rx.sizeCode() != size.code() || slot < slotBase || slot >= slotBase + window) {
            statistics.malformedResults.increment();
            return;
        }
        if (packetKey != null && !mac.verify(packet, packet.position(), length, packetKey, PacketMac.RESULT)) {
            statistics.forgedResults.increment(); // forged, or altered on the way: never read
            return;
        }
        int i = slot - slotBase;
        LaneTask task = current;
        if (stopped) {
            return;
        }
        int q = pending[i];
        // A slot whose next packet is still queued has nothing outstanding: a result for it is a duplicate.
        if (task == null || q < 0 || !loss.isOutstanding(i) || rx.tsi() != pendingRound[i]
                || rx.set() != SlotRounds.setOf(pendingRound[i])) {
            statistics.duplicateResults.increment();
            loss.duplicate();
            return;
        }
        if (length != txBytes[i]) {
            statistics.malformedResults.increment(); // the result of a packet of this round has its length
            return;
        }
        long sentAt = loss.sentAt(i);
        long rtt = loss.answered(i, now);
        inFlight--;
        if (rtt >= 0) {
            statistics.smoothedRttNanos = loss.smoothedRttNanos();
        }
        if (congestion != null) {
            count(congestion.onResult(sentAt, rtt, now));
            statistics.baseRttNanos = congestion.baseRttNanos();
        }
        lastResultAt = now;
        silenceReported = false;
        accept(task, i, q);
    }

    /**
     * The blocks of {@code task} whose results arrived: on slot i, those of every packet sent before
     * pending[i]. Counted in blocks of k values, as failover counts them: a 16-bit task's block of
     * 2k values is two of those.
     */
    private BitSet heldBlocks(LaneTask task) {
        SlotSchedule schedule = task.schedule;
        int perBlock = task.valuesPerBlock / k;
        int kBlocks = (task.to - task.from + k - 1) / k;
        BitSet held = new BitSet(kBlocks);
        for (int i = 0; i < window; i++) {
            if (schedule.firstPacket(i) < 0) {
                continue;
            }
            int answeredBelow = pending[i] >= 0 ? pending[i] : schedule.endPacket();
            for (int q = i; q < answeredBelow; q += window) {
                int block = schedule.dataBlock(q);
                if (block >= 0) {
                    held.set(block * perBlock, Math.min(kBlocks, (block + 1) * perBlock));
                }
            }
        }
        return held;
    }

    private void startNext() {
        LaneTask task = queue.poll();
        if (task == null) {
            stopTimer();
            return;
        }
        current = task;
        if (!ticking) {
            ticking = true;
            transport.ticks(true);
        }
        deadline = now + operationTimeoutNanos;
        lastResultAt = now;
        silenceReported = false;
        loss.start(now);
        activeSlots = 0;
        SlotSchedule schedule = task.schedule;
        if (task.skipZeroBlocks) {
            if (blockBits.length < schedule.blocks()) {
                blockBits = new int[schedule.blocks()];
            }
            Arrays.fill(blockBits, 0, schedule.blocks(), -1);
        }
        for (int i = 0; i < window; i++) {
            int q = schedule.firstPacket(i);
            pending[i] = q;
            if (q >= 0) {
                activeSlots++;
                enqueue(i);
            }
        }
        sendReady();
        transport.flush();
        if (current == task && activeSlots == 0) { // a task with no packet at all ends here
            finishCurrent();
        }
    }

    private void stopTimer() {
        if (ticking) {
            ticking = false;
            transport.ticks(false);
        }
    }

    /** Slot i's next packet waits for room in the window. */
    private void enqueue(int i) {
        ready.add(i, pending[i]);
    }

    /**
     * Sends queued packets, lowest first, while the window has room; and beyond it the lowest queued
     * packet when it is lower than every packet in flight (this worker's lowest unfinished one, which
     * every worker sends: see the class comment).
     */
    private void sendReady() {
        int allowed = congestion == null ? window : congestion.allowed();
        while (!ready.isEmpty() && (inFlight < allowed || ready.lowestPacket() < lowestInFlight())) {
            int i = ready.poll();
            inFlight++;
            send(i, pending[i], true);
        }
    }

    /** The lowest packet number in flight; MAX_VALUE when none. Scanned only when the window is full. */
    private int lowestInFlight() {
        int lowest = Integer.MAX_VALUE;
        for (int i = 0; i < window; i++) {
            if (loss.isOutstanding(i) && pending[i] < lowest) {
                lowest = pending[i];
            }
        }
        return lowest;
    }

    /** Builds packet q of the current task on window slot i (fresh) or sends the slot's packet again. */
    private void send(int i, int q, boolean fresh) {
        if (fresh) {
            pendingRound[i] = rounds.take(i);
            encode(i, q);
            if (packetKey != null) {
                txBytes[i] = mac.sign(txBuffers[i], 0, txBytes[i], packetKey, origin);
            }
        }
        transport.send(i, txBuffers[i], txBytes[i]);
        loss.sent(i, now, fresh);
        statistics.packetsSent.increment();
        statistics.bytesSent.add(txBytes[i]);
    }

    private void encode(int i, int q) {
        LaneTask task = current;
        AggregationPacket tx = txPackets[i];
        SlotSchedule schedule = task.schedule;
        Operation<?> op = task.operation;
        if (task.oneRound) {
            int block = schedule.dataBlock(q);
            tx.header(size, jobNumber, pendingRound[i], slotBase + i, SlotRounds.setOf(pendingRound[i]), 0, 0);
            txBytes[i] = AggregationPacket.bytesFor(OneRoundPackets.encode(op, blockStart(task, block),
                    blockEnd(task, block), tx, codec));
            return;
        }
        int e0 = 0;
        int e1 = 0;
        int exponentBlock = schedule.exponentBlock(q);
        if (exponentBlock >= 0 && op.quantized()) {
            int bits = magnitudeBits(task, exponentBlock);
            e0 = BlockQuantizer.exponent(bits);
            e1 = BlockQuantizer.flag(bits, task.skipZeroBlocks);
        } else if (op.quantized()) {
            e0 = BlockQuantizer.MIN_EXPONENT;
        }
        tx.header(size, jobNumber, pendingRound[i], slotBase + i, SlotRounds.setOf(pendingRound[i]), e0, e1);
        int dataBlock = schedule.dataBlock(q);
        int elements;
        if (dataBlock >= 0) {
            int from = blockStart(task, dataBlock);
            int to = blockEnd(task, dataBlock);
            elements = op.elementsFor(to - from);
            if (task.skipZeroBlocks && nextFlag[i] == BlockQuantizer.FLAG_ZERO) {
                elements = encodeBlocksAhead(task, q, tx); // the block is zero at every worker: no values
            } else if (nextFlag[i] != BlockQuantizer.FLAG_NONE) {
                codec.zeroFill(tx, elements); // its value cannot be carried; everyone sends zeros
            } else {
                op.encode(from, to, nextExponent[i], tx, codec);
            }
        } else {
            elements = OperationDescriptor.ELEMENTS;
            op.descriptor.write(tx);
        }
        txBytes[i] = AggregationPacket.bytesFor(elements);
    }

    /**
     * The packet that stands in for a block zero at every worker: one element per block that follows
     * the packet's exponent block on its slot (at most {@link BlockQuantizer#ZERO_LOOKAHEAD_BLOCKS}),
     * 1 where this worker's block holds a value; one element 0 when none follows. Returns the length.
     */
    private int encodeBlocksAhead(LaneTask task, int q, AggregationPacket tx) {
        SlotSchedule schedule = task.schedule;
        int ahead = schedule.blocksAhead(q, BlockQuantizer.ZERO_LOOKAHEAD_BLOCKS);
        if (ahead == 0) {
            tx.element(0, 0);
            return 1;
        }
        int e = schedule.exponentBlock(q);
        for (int j = 0; j < ahead; j++) {
            tx.element(j, magnitudeBits(task, e + (j + 1) * schedule.window()) == 0 ? 0 : 1);
        }
        return ahead;
    }

    /** The largest magnitude bits of this worker's block, read once per task where the task skips zero blocks. */
    private int magnitudeBits(LaneTask task, int block) {
        if (!task.skipZeroBlocks) {
            return task.operation.maxMagnitudeBits(blockStart(task, block), blockEnd(task, block), codec);
        }
        int bits = blockBits[block];
        if (bits < 0) {
            bits = task.operation.maxMagnitudeBits(blockStart(task, block), blockEnd(task, block), codec);
            blockBits[block] = bits;
        }
        return bits;
    }

    private void accept(LaneTask task, int i, int q) {
        SlotSchedule schedule = task.schedule;
        Operation<?> op = task.operation;
        int dataBlock = schedule.dataBlock(q);
        boolean mismatched = task.oneRound ? OneRoundPackets.mismatched(rx)
                : dataBlock < 0 && !op.descriptor.matches(rx, op.workers);
        boolean skipped = task.skipZeroBlocks && dataBlock >= 0 && nextFlag[i] == BlockQuantizer.FLAG_ZERO;
        if (mismatched) {
            MismatchedOperationException error = new MismatchedOperationException(op.description()
                    + ": the workers of job number " + jobNumber + " are not running the same all-reduce (the switch"
                    + " found different descriptions of all-reduce " + op.descriptor + "): the tensor length, element"
                    + " type, operation or order of calls differs between workers. No value was written. Every"
                    + " worker must make the same sequence of calls; this context can no longer be used: close it"
                    + " and join again.");
            reset();
            op.fail(error);
            failures.laneFailed(error);
            return;
        }
        if (task.oneRound) {
            OneRoundPackets.decode(op, rx, blockStart(task, dataBlock), blockEnd(task, dataBlock), codec);
        } else if (skipped) {
            writeZeros(task, dataBlock);
        } else if (dataBlock >= 0) {
            int from = blockStart(task, dataBlock);
            int to = blockEnd(task, dataBlock);
            boolean unrepresentable = nextFlag[i] != BlockQuantizer.FLAG_NONE;
            op.decode(rx, from, to, nextExponent[i], unrepresentable, codec);
            if (unrepresentable) {
                op.noteUnrepresentable(from, to);
            }
        }
        if (schedule.exponentBlock(q) >= 0) {
            nextExponent[i] = (byte) rx.exponent0();
            nextFlag[i] = (byte) rx.exponent1();
        }
        int next = schedule.nextPacket(q);
        if (skipped && next >= 0) {
            next = skipKnownZeros(task, i, q);
        }
        pending[i] = next;
        if (next >= 0) {
            enqueue(i);
            sendReady();
        } else if (--activeSlots == 0) {
            finishCurrent();
        } else {
            sendReady(); // the window may have grown
        }
    }

    /**
     * After the result of a packet that stood in for a zero block (in {@link #rx}): the blocks it
     * proved zero at every worker (its exponent block, where e1 says so, and the leading blocks ahead
     * whose sum is 0) need no round of their own. Writes zeros for every packet whose values are such
     * a block and whose exponent is one too (or that carries none), and returns the slot's next packet
     * to send: -1 when none is left, else one whose values are known (then sent as a stand-in again,
     * reporting further ahead) or the next block with values. Every worker reads the same result, so
     * every worker skips the same packets.
     */
    private int skipKnownZeros(LaneTask task, int i, int q) {
        SlotSchedule schedule = task.schedule;
        int e = schedule.exponentBlock(q); // >= 0: packet q has a successor
        // Known zero everywhere: block e + j * window for j = 0 (if e1 says so) and j = 1..zerosAhead.
        boolean exponentBlockZero = nextFlag[i] == BlockQuantizer.FLAG_ZERO;
        int ahead = schedule.blocksAhead(q, BlockQuantizer.ZERO_LOOKAHEAD_BLOCKS);
        int zerosAhead = 0;
        while (zerosAhead < ahead && rx.element(zerosAhead) == 0) {
            zerosAhead++;
        }
        int next = schedule.nextPacket(q); // its values: block e; its exponent: block e + window, if any
        int j = 0;
        while (next >= 0 && (j == 0 ? exponentBlockZero : j <= zerosAhead)
                && (schedule.exponentBlock(next) < 0 || j + 1 <= zerosAhead)) {
            writeZeros(task, e + j * schedule.window());
            next = schedule.nextPacket(next);
            j++;
        }
        if (next >= 0 && j > 0) {
            nextFlag[i] = BlockQuantizer.FLAG_ZERO; // its values are known zero (j <= zerosAhead): a stand-in again
        }
        return next;
    }

    private void writeZeros(LaneTask task, int block) {
        task.operation.writeZeros(blockStart(task, block), blockEnd(task, block), codec); // what a sum of zeros gives: +0.0
        statistics.zeroBlocksSkipped.increment();
    }

    /** Counts what a congestion signal did and publishes the window. */
    private void count(CongestionWindow.Reaction reaction) {
        switch (reaction) {
            case DELAY_DECREASE -> statistics.windowDelayDecreases.increment();
            case LOSS_DECREASE -> statistics.windowLossDecreases.increment();
            case RANDOM_LOSS -> statistics.randomLosses.increment();
            case NONE -> {
                // Grew, or a signal this round trip already counted.
            }
        }
        statistics.congestionWindow = congestion.window();
    }

    private void finishCurrent() {
        LaneTask task = current;
        current = null;
        task.operation.laneDone();
        startNext();
    }

    /**
     * The timers, at {@code now}: the operation's deadline, the switch's silence, and the loss detector's
     * retransmissions. The transport calls it about every {@link #TICK_NANOS} while asked to ({@link Transport#ticks}).
     */
    void tick(long now) {
        this.now = now;
        LaneTask task = current;
        if (task == null) {
            return;
        }
        if (now - deadline > 0) {
            statistics.operationTimeouts.increment();
            AllReduceTimeoutException error = timeoutError(task);
            reset();
            task.operation.fail(error);
            failures.laneFailed(error);
            return;
        }
        if (silenceNanos > 0 && !silenceReported && now - lastResultAt > silenceNanos) {
            silenceReported = true; // once per silence: a result re-arms it
            silenceListener.run();
        }
        int n = loss.detect(now, lost);
        if (n == 0) {
            return;
        }
        if (loss.timedOut()) {
            statistics.retransmissionTimeouts.increment();
        }
        for (int j = 0; j < n; j++) {
            int i = lost[j];
            if (congestion != null) {
                count(congestion.onLoss(loss.sentAt(i), now));
            }
            statistics.retransmissions.increment();
            send(i, pending[i], false);
        }
        transport.flush();
    }

    private AllReduceTimeoutException timeoutError(LaneTask task) {
        int waiting = 0;
        int example = -1;
        for (int i = 0; i < window; i++) {
            if (pending[i] >= 0) {
                waiting++;
                example = example < 0 ? slotBase + i : example;
            }
        }
        return new AllReduceTimeoutException(task.operation.description() + " timed out after "
                + TimeUnit.NANOSECONDS.toMillis(operationTimeoutNanos) + " ms: worker thread " + index + " still waits for "
                + waiting + " slot(s) (e.g. slot " + example + ") of job number " + jobNumber
                + ". The switch may be down or unreachable, another worker of the job may have died, or the workers"
                + " may not be running the same sequence of all-reduces (same lengths and types). This context can no"
                + " longer be used: close it and join again.");
    }

    /** Forgets the running task after a failure. */
    private void reset() {
        current = null;
        stopTimer();
        Arrays.fill(pending, -1);
        for (int i = 0; i < window; i++) {
            loss.forget(i);
        }
        ready.clear();
        inFlight = 0;
    }

    private int blockStart(LaneTask task, int block) {
        return task.from + block * task.valuesPerBlock;
    }

    private int blockEnd(LaneTask task, int block) {
        return Math.min(task.to, task.from + (block + 1) * task.valuesPerBlock);
    }
}
