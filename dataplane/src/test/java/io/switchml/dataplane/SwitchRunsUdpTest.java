package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.epoll.EpollDatagramChannel;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.SegmentedDatagramPacket;
import io.netty.channel.socket.DatagramPacket;
import io.switchml.protocol.PayloadSize;
import io.switchml.udp.UdpOffloads;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Runs both ways over real sockets (docs/ARCHITECTURE.md section 17): a worker's run sent as one segmented datagram
 * reaches a GRO switch as one datagram, whose packets are each checked as a single datagram would be (a foreign packet
 * in the middle is dropped and counted, a slot missing from the run stays open until it comes), and the results one
 * read completed for a worker leave as one segmented datagram, which a socket without GRO receives as its results.
 */
class SwitchRunsUdpTest {
    private static final Duration ARRIVAL = Duration.ofSeconds(5);
    private static final PayloadSize SIZE = PayloadSize.B256;

    /** A worker on a Netty epoll socket, which can send a run as one segmented datagram; it keeps what it receives. */
    private static final class RunWorker implements AutoCloseable {
        private final BlockingQueue<byte[]> received = new LinkedBlockingQueue<>();
        private final Channel channel;

        RunWorker(EventLoopGroup loop) {
            channel = new Bootstrap().group(loop).channel(EpollDatagramChannel.class)
                    .handler(new SimpleChannelInboundHandler<DatagramPacket>() {
                        @Override
                        protected void channelRead0(ChannelHandlerContext ctx, DatagramPacket msg) {
                            byte[] bytes = new byte[msg.content().readableBytes()];
                            msg.content().getBytes(msg.content().readerIndex(), bytes);
                            received.add(bytes);
                        }
                    })
                    .bind(new InetSocketAddress(LoopbackWorkers.LOOPBACK, 0)).syncUninterruptibly().channel();
        }

        WorkerEndpoint endpoint() {
            return new WorkerEndpoint(LoopbackWorkers.LOOPBACK, new int[]{((InetSocketAddress) channel.localAddress()).getPort()});
        }

        /** Sends the packets, all of one length, as one segmented datagram. */
        void sendRun(InetSocketAddress to, ByteBuffer... packets) {
            ByteBuf content = Unpooled.wrappedBuffer(packets);
            channel.writeAndFlush(new SegmentedDatagramPacket(content, packets[0].remaining(), to)).syncUninterruptibly();
        }

        void send(InetSocketAddress to, ByteBuffer packet) {
            channel.writeAndFlush(new DatagramPacket(Unpooled.wrappedBuffer(packet), to)).syncUninterruptibly();
        }

        /** The results that arrive within the arrival time, up to {@code count}. */
        List<byte[]> results(int count) throws InterruptedException {
            List<byte[]> results = new ArrayList<>();
            long deadline = System.nanoTime() + ARRIVAL.toNanos();
            while (results.size() < count) {
                byte[] next = received.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (next == null) {
                    break;
                }
                results.add(next);
            }
            return results;
        }

        @Override
        public void close() {
            channel.close().syncUninterruptibly();
        }
    }

    @Test
    void aRunIsCheckedPacketByPacketAndTheResultsOfOneReadLeaveAsOneRunPerWorker() throws InterruptedException {
        assumeTrue(UdpOffloads.segmentationAvailable(), "this host cannot send segmented UDP datagrams");
        EventLoopGroup loop = new MultiThreadIoEventLoopGroup(1, EpollIoHandler.newFactory());
        try (AggregationSwitch aggregationSwitch = AggregationSwitch.start(new SwitchConfig().bindAddress("127.0.0.1")
                .basePort(0).ipcBase(null));
             RunWorker first = new RunWorker(loop); RunWorker second = new RunWorker(loop)) {
            assumeTrue(aggregationSwitch.counters().get("udp_gro_off") == 0, "the kernel refused UDP GRO");
            InetSocketAddress port = new InetSocketAddress(LoopbackWorkers.LOOPBACK, aggregationSwitch.ports()[0]);
            aggregationSwitch.installJob(new JobSpec(1, "runs", SIZE, 4, 1, List.of(first.endpoint(), second.endpoint()),
                    false));

            // The second worker's four packets, one datagram each.
            for (int slot = 0; slot < 4; slot++) {
                second.send(port, TestPackets.packet(SIZE, 1, slot, slot, 0, 0, 0, TestPackets.filled(64, 10 * (slot + 1))));
            }
            AggregationSwitchUdpTest.awaitCounter(aggregationSwitch, "packets_received", 4);
            // The first worker's run: slots 0, 1 and 3, with a packet of a job that does not exist where slot 2 would be.
            first.sendRun(port,
                    TestPackets.packet(SIZE, 1, 0, 0, 0, 0, 0, TestPackets.filled(64, 1)),
                    TestPackets.packet(SIZE, 1, 1, 1, 0, 0, 0, TestPackets.filled(64, 2)),
                    TestPackets.packet(SIZE, 9, 2, 2, 0, 0, 0, TestPackets.filled(64, 3)),
                    TestPackets.packet(SIZE, 1, 3, 3, 0, 0, 0, TestPackets.filled(64, 4)));
            AggregationSwitchUdpTest.awaitCounter(aggregationSwitch, "packets_received", 8);

            for (RunWorker worker : List.of(first, second)) {
                List<byte[]> results = worker.results(3);
                assertThat(results).as("the slots the run completed").hasSize(3);
                for (byte[] result : results) {
                    int slot = TestPackets.wrap(result).slot();
                    assertThat(slot).isIn(0, 1, 3);
                    assertThat(result).hasSize(SIZE.packetBytes());
                    assertThat(TestPackets.elements(result)).containsOnly(11 * (slot + 1));
                }
            }
            Map<String, Long> counters = aggregationSwitch.counters();
            assertThat(counters).containsEntry("datagrams_received", 5L) // four singles and one run
                    .containsEntry("drops_unknown_job", 1L).containsEntry("contributions", 7L)
                    .containsEntry("results_sent", 3L).containsEntry("packets_sent", 6L)
                    .containsEntry("datagrams_sent", 2L).containsEntry("segmented_datagrams_sent", 2L)
                    .containsEntry("udp_segmentation_off", 0L);

            // The hole is filled by the first worker's packet for slot 2, alone.
            first.send(port, TestPackets.packet(SIZE, 1, 2, 2, 0, 0, 0, TestPackets.filled(64, 3)));
            for (RunWorker worker : List.of(first, second)) {
                List<byte[]> results = worker.results(1);
                assertThat(results).hasSize(1);
                assertThat(TestPackets.wrap(results.get(0)).slot()).isEqualTo(2);
                assertThat(TestPackets.elements(results.get(0))).containsOnly(33);
            }
        } finally {
            loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }
}
