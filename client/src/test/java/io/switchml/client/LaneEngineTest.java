package io.switchml.client;

import io.switchml.api.AllReduceTimeoutException;
import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.control.WorkerCounter;
import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PacketKey;
import io.switchml.protocol.PacketMac;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The worker's protocol engine alone, as Aeron tests its sender against mocks: a scripted transport records what the
 * engine sends, the test plays the switch (a job of one worker, whose every result is its packet as it was sent), and
 * time is an argument. No socket, no event loop.
 */
class LaneEngineTest {
    private static final int K = 64;
    private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

    /** What the engine sent, in order, each packet's bytes as they were when sent. */
    private static final class ScriptedTransport implements LaneEngine.Transport {
        final List<Sent> sent = new ArrayList<>();
        int flushes;
        Boolean ticking;

        @Override
        public void send(int slot, ByteBuffer packet, int length) {
            ByteBuffer copy = ByteBuffer.allocate(length);
            copy.put(packet.duplicate().position(0).limit(length)).flip();
            sent.add(new Sent(slot, copy));
        }

        @Override
        public void flush() {
            flushes++;
        }

        @Override
        public void ticks(boolean needed) {
            ticking = needed;
        }

        /** The packets sent since {@code from}, taken out of the record. */
        List<Sent> takeFrom(int from) {
            List<Sent> taken = new ArrayList<>(sent.subList(from, sent.size()));
            sent.subList(from, sent.size()).clear();
            return taken;
        }
    }

    /** One packet the engine sent; for a job of one worker the switch's result is the same bytes. */
    private record Sent(int slot, ByteBuffer bytes) {
        /** A fresh copy: the switch's datagram, which the test may spoil. */
        ByteBuffer result() {
            ByteBuffer copy = ByteBuffer.allocate(bytes.remaining());
            copy.put(bytes.duplicate()).flip();
            return copy;
        }

        int round() {
            return new AggregationPacket().wrap(bytes.duplicate().order(ByteOrder.BIG_ENDIAN), 0).tsi();
        }
    }

    private final ScriptedTransport transport = new ScriptedTransport();
    private final WorkerStatistics statistics = new WorkerStatistics();
    private final List<RuntimeException> failures = new ArrayList<>();
    private int silences;

    private LaneEngine engine(int window, boolean congestionControl, Map<String, String> settings) {
        SwitchMLConfig config = SwitchMLConfig.builder().settings(settings).rank(0).workers(1).build();
        return new LaneEngine(0, window, PayloadSize.ofElements(K), 3, config, congestionControl, false, statistics,
                failures::add, () -> silences++, transport);
    }

    private LaneEngine engine(int window) {
        return engine(window, false, Map.of("operationTimeoutMs", "1000", "failoverDetectionMs", "500"));
    }

    private static float[] tensor(int length, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        float[] t = new float[length];
        for (int i = 0; i < length; i++) {
            t[i] = (float) (random.nextDouble() * 200 - 100);
        }
        return t;
    }

    private static FloatOperation operation(long sequence, float[] in, float[] out) {
        return new FloatOperation(sequence, ReduceOp.SUM, FloatBuffer.wrap(in), FloatBuffer.wrap(out), 1, 1, Runnable::run,
                "all-reduce #" + sequence + " of the test", false);
    }

    private static LaneTask task(Operation<?> operation, int window) {
        return new LaneTask(operation, 0, operation.length, K, window, 0, false);
    }

    /** The exact result of a job of one worker: its tensor, rounded per block of K as the switch path rounds it. */
    private static float[] expected(float[] in) {
        return ReferenceAllReduce.floats(new float[][]{in}, K, ReduceOp.SUM);
    }

    /** Answers every packet sent since {@code from}, in the order given, until nothing more goes out. */
    private void answerAll(LaneEngine engine, long now) {
        while (!transport.sent.isEmpty()) {
            for (Sent s : transport.takeFrom(0)) {
                engine.onResult(s.result(), now);
            }
        }
    }

    @Test
    void anAuthenticatedEngineTagsEveryPacketAndReadsOnlyResultsThatCarryTheSwitchsTag() throws Exception {
        PacketKey key = PacketKey.derive(MessageDigest.getInstance("SHA-256").digest(
                "the-job-secret-of-the-test".getBytes(StandardCharsets.UTF_8)), new byte[PacketKey.SALT_BYTES],
                PayloadSize.ofElements(K));
        SwitchMLConfig config = SwitchMLConfig.builder().rank(0).workers(1).build();
        LaneEngine engine = new LaneEngine(0, 4, PayloadSize.ofElements(K), 3, config, false, false, statistics,
                failures::add, () -> silences++, transport, key);
        float[] in = tensor(10 * K + 17, 2);
        float[] out = new float[in.length];
        FloatOperation op = operation(0, in, out);
        engine.submit(task(op, 4), 0);
        PacketMac mac = new PacketMac();
        int forgeries = 0;
        while (!transport.sent.isEmpty()) {
            for (Sent s : transport.takeFrom(0)) {
                ByteBuffer packet = s.result();
                assertThat(mac.verify(packet, 0, packet.remaining(), key, 0)).as("rank 0's tag on its packet").isTrue();
                // The worker's own packet sent back, and a result altered on the way: neither is read.
                engine.onResult(s.result(), MS);
                ByteBuffer altered = s.result();
                mac.sign(altered, 0, altered.remaining() - PacketMac.TAG_BYTES, key, PacketMac.RESULT);
                altered.put(ProtocolConstants.PAYLOAD_OFFSET, (byte) (altered.get(ProtocolConstants.PAYLOAD_OFFSET) ^ 1));
                engine.onResult(altered, MS);
                forgeries += 2;
                // The switch of a job of one worker: the same bytes, with its result's tag in place of the rank's.
                mac.sign(packet, 0, packet.remaining() - PacketMac.TAG_BYTES, key, PacketMac.RESULT);
                engine.onResult(packet, MS);
            }
        }
        assertThat(op.future).isCompleted();
        assertThat(out).isEqualTo(expected(in));
        assertThat(statistics.count(WorkerCounter.FORGED_RESULTS)).isEqualTo(forgeries);
        assertThat(statistics.snapshot().packetsSent()).isEqualTo(4 + 11);
        assertThat(statistics.snapshot().retransmissions()).isZero();
    }

    @Test
    void aTaskGoesOutAWindowAtATimeAndEndsWithTheExactResult() {
        LaneEngine engine = engine(4);
        float[] in = tensor(10 * K + 17, 1);
        float[] out = new float[in.length];
        FloatOperation op = operation(0, in, out);
        engine.submit(task(op, 4), 0);
        assertThat(transport.ticking).as("ticks while busy").isTrue();
        assertThat(transport.flushes).isEqualTo(1);
        assertThat(transport.sent).extracting(Sent::slot).containsExactly(0, 1, 2, 3);
        answerAll(engine, MS);
        assertThat(op.future).isCompleted();
        assertThat(out).isEqualTo(expected(in));
        assertThat(transport.ticking).as("idle: no ticks").isFalse();
        // 11 blocks on 4 slots: a bootstrap packet (exponents, descriptor) per slot, then one per block.
        assertThat(statistics.snapshot().packetsSent()).isEqualTo(4 + 11);
        assertThat(statistics.snapshot().retransmissions()).isZero();
        assertThat(engine.busy()).isFalse();
    }

    @Test
    void reorderedResultsGiveTheSameTensor() {
        LaneEngine engine = engine(8);
        float[] in = tensor(40 * K, 2);
        float[] out = new float[in.length];
        FloatOperation op = operation(0, in, out);
        engine.submit(task(op, 8), 0);
        while (!transport.sent.isEmpty()) {
            List<Sent> burst = transport.takeFrom(0);
            Collections.reverse(burst);
            for (Sent s : burst) {
                engine.onResult(s.result(), MS);
            }
        }
        assertThat(op.future).isCompleted();
        assertThat(out).isEqualTo(expected(in));
    }

    @Test
    void aLostPacketIsResentAsItWasAfterItsTimeoutAndOnlyItsSlotWaits() {
        LaneEngine engine = engine(4);
        float[] in = tensor(8 * K, 3);
        float[] out = new float[in.length];
        FloatOperation op = operation(0, in, out);
        engine.submit(task(op, 4), 0);
        List<Sent> first = transport.takeFrom(0);
        Sent lost = first.get(0);
        for (Sent s : first.subList(1, first.size())) {
            engine.onResult(s.result(), MS);
        }
        answerAll(engine, MS); // slots 1..3 run to their end; slot 0 still waits for its first result
        assertThat(op.future).isNotDone();
        long sentBefore = statistics.snapshot().packetsSent();
        engine.tick(200 * MS); // past any retransmission timeout
        assertThat(transport.sent).hasSize(1);
        Sent again = transport.sent.get(0);
        assertThat(again.slot()).isEqualTo(0);
        assertThat(again.bytes()).as("the same bytes").isEqualTo(lost.bytes());
        assertThat(statistics.snapshot().retransmissions()).isEqualTo(1);
        assertThat(statistics.snapshot().packetsSent()).isEqualTo(sentBefore + 1);
        answerAll(engine, 201 * MS);
        assertThat(op.future).isCompleted();
        assertThat(out).isEqualTo(expected(in));
    }

    @Test
    void duplicatesForeignAndMalformedResultsAreCountedAndChangeNothing() {
        LaneEngine engine = engine(2);
        float[] in = tensor(4 * K, 4);
        float[] out = new float[in.length];
        FloatOperation op = operation(0, in, out);
        engine.submit(task(op, 2), 0);
        List<Sent> bootstrap = transport.takeFrom(0);
        Sent first = bootstrap.get(0);
        engine.onResult(first.result(), MS);
        engine.onResult(first.result(), MS); // the switch answered a retransmission too
        assertThat(statistics.duplicateResults.sum()).isEqualTo(1);

        ByteBuffer foreign = first.result();
        foreign.put(1, (byte) 9); // another job's number
        engine.onResult(foreign, MS);
        ByteBuffer truncated = first.result().limit(5);
        engine.onResult(truncated, MS);
        ByteBuffer otherSlot = first.result();
        new AggregationPacket().wrap(otherSlot.order(ByteOrder.BIG_ENDIAN), 0).poolIndex(7, 0); // not this lane's
        engine.onResult(otherSlot, MS);
        assertThat(statistics.malformedResults.sum()).isEqualTo(3);

        engine.onResult(bootstrap.get(1).result(), 2 * MS);
        answerAll(engine, 2 * MS);
        assertThat(op.future).isCompleted();
        assertThat(out).isEqualTo(expected(in));
        // A result for a slot the finished task no longer uses.
        engine.onResult(first.result(), 3 * MS);
        assertThat(statistics.duplicateResults.sum()).isEqualTo(2);
    }

    @Test
    void aSilentSwitchIsReportedOnceThenTheTaskFailsAtItsDeadlineNamingWhatItWaitsFor() {
        LaneEngine engine = engine(4);
        float[] in = tensor(4 * K, 5);
        FloatOperation op = operation(0, in, new float[in.length]);
        engine.submit(task(op, 4), 0);
        engine.tick(400 * MS);
        assertThat(silences).isZero();
        engine.tick(600 * MS);
        engine.tick(700 * MS);
        assertThat(silences).as("once per silence").isEqualTo(1);
        engine.tick(1001 * MS);
        assertThat(op.future).isCompletedExceptionally();
        assertThat(failures).singleElement().isInstanceOf(AllReduceTimeoutException.class);
        assertThat(failures.get(0)).hasMessageContaining("all-reduce #0 of the test timed out after 1000 ms")
                .hasMessageContaining("still waits for 4 slot(s) (e.g. slot 0) of job number 3");
        assertThat(statistics.operationTimeouts.sum()).isEqualTo(1);
        assertThat(transport.ticking).isFalse();
    }

    @Test
    void theWindowStartsAtTheCongestionWindowAndGrowsWithResults() {
        LaneEngine engine = engine(32, true, Map.of("congestionInitialWindow", "2"));
        float[] in = tensor(200 * K, 6);
        float[] out = new float[in.length];
        FloatOperation op = operation(0, in, out);
        engine.submit(task(op, 32), 0);
        assertThat(transport.sent).as("the initial window").hasSize(2);
        int mostInFlight = 0;
        long now = 0;
        while (!transport.sent.isEmpty()) {
            List<Sent> burst = transport.takeFrom(0);
            mostInFlight = Math.max(mostInFlight, burst.size());
            now += 10_000; // 10 us round trips: no delay signal
            for (Sent s : burst) {
                engine.onResult(s.result(), now);
            }
        }
        assertThat(op.future).isCompleted();
        assertThat(out).isEqualTo(expected(in));
        assertThat(mostInFlight).as("grown past its start").isGreaterThan(4);
        assertThat(statistics.congestionWindow).isGreaterThan(2);
    }

    @Test
    void aStoppedEngineSaysWhichBlocksItHoldsAndWhatWasQueuedAndSendsNothingMore() {
        LaneEngine engine = engine(4);
        float[] in = tensor(12 * K, 7);
        FloatOperation op = operation(0, in, new float[in.length]);
        LaneTask running = task(op, 4);
        engine.submit(running, 0);
        LaneTask queued = task(operation(1, new float[K], new float[K]), 4);
        engine.submit(queued, 0);
        // Answer the bootstrap round and the first data round of slots 0 and 1 only.
        for (int round = 0; round < 2; round++) {
            for (Sent s : transport.takeFrom(0)) {
                if (s.slot() < 2) {
                    engine.onResult(s.result(), MS);
                }
            }
        }
        Sent late = transport.sent.isEmpty() ? null : transport.sent.get(0);
        transport.sent.clear();
        LaneEngine.Snapshot snapshot = engine.stop();
        assertThat(snapshot.running()).isSameAs(running);
        assertThat(snapshot.queued()).containsExactly(queued);
        // Blocks 0 and 1 (slots 0 and 1's first data packets) arrived; none of slots 2 and 3.
        assertThat(snapshot.runningHeld().stream().toArray()).containsExactly(0, 1);
        assertThat(transport.ticking).isFalse();
        if (late != null) {
            engine.onResult(late.result(), 2 * MS);
        }
        engine.tick(10_000 * MS);
        assertThat(transport.sent).as("a stopped engine sends nothing").isEmpty();
        assertThat(op.future).isNotDone();
        assertThat(failures).isEmpty();
    }

    @Test
    void aRoundsResultIsTheRoundSentNotAnEarlierOne() {
        LaneEngine engine = engine(1);
        float[] in = tensor(3 * K, 8);
        float[] out = new float[in.length];
        FloatOperation op = operation(0, in, out);
        engine.submit(task(op, 1), 0);
        Sent bootstrap = transport.takeFrom(0).get(0);
        engine.onResult(bootstrap.result(), MS);
        Sent block0 = transport.takeFrom(0).get(0);
        assertThat(block0.round()).isNotEqualTo(bootstrap.round());
        // The bootstrap's result again (a late copy): same slot, the other round, so a duplicate.
        engine.onResult(bootstrap.result(), MS);
        assertThat(statistics.duplicateResults.sum()).isEqualTo(1);
        engine.onResult(block0.result(), MS);
        answerAll(engine, 2 * MS);
        assertThat(out).isEqualTo(expected(in));
    }
}
