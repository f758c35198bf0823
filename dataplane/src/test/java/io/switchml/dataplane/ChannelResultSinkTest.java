package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.epoll.SegmentedDatagramPacket;
import io.netty.channel.socket.DatagramPacket;
import io.netty.util.ReferenceCountUtil;
import io.switchml.udp.RefusesSegmentedDatagrams;
import io.switchml.udp.UdpOffloads;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * How a switch port's results leave it (docs/ARCHITECTURE.md section 17): a worker's results of one read as runs, one
 * segmented datagram each, within the kernel's limits; one datagram each without segmentation; and after the kernel
 * refused a run, one datagram each from then on, counted once. The channel is an embedded one.
 */
class ChannelResultSinkTest {
    private static final InetSocketAddress A = new InetSocketAddress("127.0.0.1", 40001);
    private static final InetSocketAddress B = new InetSocketAddress("127.0.0.1", 40002);

    /** The port under test: an embedded channel, the sink bound to its last handler's context. */
    private static final class Port {
        final SwitchCounters counters = new SwitchCounters();
        final ChannelResultSink sink;
        final EmbeddedChannel channel;
        final ChannelHandlerContext context;

        Port(boolean segmenting, ChannelOutboundHandlerAdapter path) {
            sink = new ChannelResultSink(counters, segmenting);
            ChannelInboundHandlerAdapter last = new ChannelInboundHandlerAdapter();
            channel = path == null ? new EmbeddedChannel(last) : new EmbeddedChannel(path, last);
            context = channel.pipeline().context(last);
        }

        /** One read: each result, of the given length, to its recipient; then the port's flush. */
        void read(Object... lengthsAndRecipients) {
            for (int i = 0; i < lengthsAndRecipients.length; i += 2) {
                int length = (Integer) lengthsAndRecipients[i];
                ByteBuf received = Unpooled.buffer(length).writeZero(length);
                received.setByte(0, i); // tells the results apart
                sink.begin(context, received);
                sink.send((InetSocketAddress) lengthsAndRecipients[i + 1], received.nioBuffer());
                sink.end();
                received.release();
            }
            sink.flush();
            channel.runPendingTasks();
        }

        List<Object> written() {
            List<Object> out = new ArrayList<>();
            Object message;
            while ((message = channel.readOutbound()) != null) {
                out.add(message);
            }
            return out;
        }
    }

    @Test
    void aWorkersResultsOfOneReadGoAsOneRunAndEachWorkerHasItsOwn() {
        Port port = new Port(true, null);
        port.read(266, A, 266, B, 266, A, 266, B, 266, A, 100, A);
        List<Object> written = port.written();
        assertThat(written).hasSize(2).allMatch(m -> m instanceof SegmentedDatagramPacket);
        for (Object message : written) {
            SegmentedDatagramPacket run = (SegmentedDatagramPacket) message;
            assertThat(run.segmentSize()).isEqualTo(266);
            int expected = run.recipient().equals(A) ? 3 * 266 + 100 : 2 * 266; // a shorter last result ends A's run
            assertThat(run.content().readableBytes()).isEqualTo(expected);
            if (run.recipient().equals(A)) {
                assertThat(run.content().getByte(0)).isEqualTo((byte) 0);
                assertThat(run.content().getByte(266)).isEqualTo((byte) 4);
                assertThat(run.content().getByte(3 * 266)).isEqualTo((byte) 10);
            }
            run.release();
        }
        assertThat(SwitchCounters.snapshot(List.of(port.counters))).containsEntry("datagrams_sent", 2L)
                .containsEntry("segmented_datagrams_sent", 2L);
    }

    @Test
    void aRunEndsAtAShorterOrLongerResultAtTheKernelsSegmentLimitAndAtTheLargestDatagram() {
        Port port = new Port(true, null);
        // A shorter result closes the run; a longer one starts a new one.
        port.read(266, A, 100, A, 266, A, 266, A);
        assertThat(segmentCounts(port.written())).containsExactly(2, 2);
        // 64 segments at most.
        Object[] many = new Object[2 * (UdpOffloads.MAX_SEGMENTS + 1)];
        for (int i = 0; i < many.length; i += 2) {
            many[i] = 100;
            many[i + 1] = A;
        }
        port.read(many);
        assertThat(segmentCounts(port.written())).containsExactly(UdpOffloads.MAX_SEGMENTS, 1);
        // 65 507 bytes at most: seven results of 8 202 bytes fit, the eighth starts the next run.
        Object[] large = new Object[16];
        for (int i = 0; i < large.length; i += 2) {
            large[i] = 8202;
            large[i + 1] = B;
        }
        port.read(large);
        assertThat(segmentCounts(port.written())).containsExactly(7, 1);
    }

    @Test
    void withoutSegmentationEveryResultIsItsOwnDatagram() {
        Port port = new Port(false, null);
        port.read(266, A, 266, A, 266, B);
        List<Object> written = port.written();
        assertThat(written).hasSize(3).allMatch(m -> m instanceof DatagramPacket && !(m instanceof SegmentedDatagramPacket));
        written.forEach(ReferenceCountUtil::release);
        assertThat(SwitchCounters.snapshot(List.of(port.counters))).containsEntry("datagrams_sent", 3L)
                .containsEntry("segmented_datagrams_sent", 0L);
    }

    @Test
    void aRefusedRunTurnsSegmentationOffForThePortOnceAndForAll() {
        RefusesSegmentedDatagrams path = new RefusesSegmentedDatagrams();
        Port port = new Port(true, path);
        port.read(266, A, 266, A, 266, A);
        assertThat(path.refused()).isEqualTo(1);
        assertThat(port.written()).isEmpty(); // lost: the workers resend, and the switch answers from the stored result
        assertThat(port.sink.segmenting()).isFalse();
        port.read(266, A, 266, A);
        port.read(266, B, 266, B);
        List<Object> written = port.written();
        assertThat(written).hasSize(4).allMatch(m -> !(m instanceof SegmentedDatagramPacket));
        written.forEach(ReferenceCountUtil::release);
        assertThat(path.refused()).isEqualTo(1);
        assertThat(SwitchCounters.snapshot(List.of(port.counters))).containsEntry("udp_segmentation_off", 1L).containsEntry("io_errors", 1L);
    }

    private static List<Integer> segmentCounts(List<Object> written) {
        List<Integer> counts = new ArrayList<>();
        for (Object message : written) {
            if (message instanceof SegmentedDatagramPacket run) {
                counts.add((run.content().readableBytes() + run.segmentSize() - 1) / run.segmentSize());
            } else {
                counts.add(1);
            }
            ReferenceCountUtil.release(message);
        }
        return counts;
    }
}
