package io.switchml.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.epoll.SegmentedDatagramPacket;
import io.netty.channel.socket.DatagramPacket;
import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.protocol.PayloadSize;
import io.switchml.udp.RefusesSegmentedDatagrams;
import java.net.InetSocketAddress;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A worker lane over UDP whose path refuses segmented datagrams (as a device that cannot checksum them does, with
 * EIO) turns segmentation off after the first refusal and resends the lost packets one datagram each: nothing is
 * lost. The channel is an embedded one; the test plays a switch for a job of one worker, whose result is the packet.
 */
class WorkerLaneSegmentationTest {
    private static final int K = 64;
    private static final InetSocketAddress SWITCH = new InetSocketAddress("127.0.0.1", 9);

    @Test
    void aRefusedSegmentedDatagramTurnsSegmentationOffAndItsPacketsAreResentOneByOne() {
        RefusesSegmentedDatagrams path = new RefusesSegmentedDatagrams();
        EmbeddedChannel channel = new EmbeddedChannel(path);
        WorkerStatistics statistics = new WorkerStatistics();
        List<RuntimeException> failures = new ArrayList<>();
        SwitchMLConfig config = SwitchMLConfig.builder().rank(0).workers(1).operationTimeout(java.time.Duration.ofSeconds(20)).build();
        WorkerLane lane = new WorkerLane(0, 8, PayloadSize.ofElements(K), 3, config, false, null, true, false, statistics,
                failures::add, null, channel, SWITCH, null);
        channel.pipeline().addLast(lane);

        float[] in = new float[20 * K + 5];
        SplittableRandom random = new SplittableRandom(36);
        for (int i = 0; i < in.length; i++) {
            in[i] = (float) (random.nextDouble() * 200 - 100);
        }
        float[] out = new float[in.length];
        FloatOperation op = new FloatOperation(0, ReduceOp.SUM, FloatBuffer.wrap(in), FloatBuffer.wrap(out), 1, 1,
                Runnable::run, "all-reduce #0 of the test", false);
        lane.submit(new LaneTask(op, 0, op.length, K, 8, 0, false));

        // The lane's first window (packets that carry exponents only, of one length) goes as runs, which the path
        // refuses; the test answers each burst's packets together, as one read of the switch's results. The
        // retransmission timer resends the refused packets, one datagram each from then on.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!op.future.isDone() && System.nanoTime() < deadline) {
            channel.runPendingTasks();
            channel.runScheduledPendingTasks();
            List<Object> results = new ArrayList<>();
            Object sent;
            while ((sent = channel.readOutbound()) != null) {
                assertThat(sent).as("after the refusal, one datagram per packet").isInstanceOf(ByteBuf.class);
                ByteBuf packet = (ByteBuf) sent;
                results.add(new DatagramPacket(Unpooled.copiedBuffer(packet), new InetSocketAddress("127.0.0.1", 40000),
                        SWITCH));
                packet.release();
            }
            if (!results.isEmpty()) {
                channel.writeInbound(results.toArray());
            }
            Thread.onSpinWait();
        }
        assertThat(op.future).as("the all-reduce ended").isCompleted();
        assertThat(failures).isEmpty();
        // The runs written before the first refusal was known (one burst's, refused at its flush) were all refused;
        // none came after it.
        assertThat(path.refused()).isPositive()
                .isEqualTo(statistics.count(io.switchml.control.WorkerCounter.SEGMENTED_DATAGRAMS));
        assertThat(statistics.count(io.switchml.control.WorkerCounter.UDP_SEGMENTATION_OFF)).isEqualTo(1);
        assertThat(out).isEqualTo(ReferenceAllReduce.floats(new float[][]{in}, K, ReduceOp.SUM));
        channel.finishAndReleaseAll();
    }
}
