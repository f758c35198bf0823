package io.switchml.client;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioDatagramChannel;
import io.switchml.ipc.RequestRing;
import io.switchml.ipc.ResultBoard;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The shared-memory transport alone, against the port's own files (no switch): the engine's packets go from its
 * buffers into the request ring, a full ring keeps them in order and sends each slot's latest bytes, and results are
 * handed on in place: the board's record itself, the same view every time.
 */
class IpcLinkTest {
    private static final int WINDOW = 4;
    private static final int SLOT_BASE = 8;

    @TempDir
    Path dir;
    private EventLoopGroup group;
    private Channel channel;

    /** What the link handed on. */
    private final List<byte[]> results = new ArrayList<>();
    private final List<ByteBuffer> views = new ArrayList<>();
    private int batches;

    private final IpcLink.Receiver receiver = new IpcLink.Receiver() {
        @Override
        public void onResult(ByteBuffer result, long now) {
            views.add(result);
            byte[] bytes = new byte[result.remaining()];
            result.duplicate().get(bytes);
            results.add(bytes);
        }

        @Override
        public void resultsDone() {
            batches++;
        }

        @Override
        public void broken(IpcLink.SharedMemoryPortBroken error) {
            throw new AssertionError("not broken", error);
        }
    };

    @BeforeEach
    void bind() {
        group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        channel = new Bootstrap().group(group).channel(NioDatagramChannel.class).handler(new ChannelInboundHandlerAdapter())
                .bind(new InetSocketAddress("127.0.0.1", 0)).syncUninterruptibly().channel();
    }

    @AfterEach
    void close() throws Exception {
        channel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }

    /** Runs {@code task} on the channel's loop, where the link lives, and waits for it. */
    private void onLoop(Runnable task) throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        channel.eventLoop().execute(() -> {
            try {
                task.run();
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        done.get(10, TimeUnit.SECONDS);
    }

    private static ByteBuffer packet(int fill) {
        ByteBuffer p = ByteBuffer.allocateDirect(64);
        for (int i = 0; i < 64; i++) {
            p.put(i, (byte) (fill + i));
        }
        return p;
    }

    private static List<byte[]> drain(RequestRing ring) {
        List<byte[]> read = new ArrayList<>();
        ring.drain((ip, port, p) -> {
            byte[] bytes = new byte[p.remaining()];
            p.get(bytes);
            read.add(bytes);
        }, 100);
        return read;
    }

    private static byte[] prefix(ByteBuffer p, int length) {
        byte[] bytes = new byte[length];
        p.duplicate().position(0).limit(length).get(bytes);
        return bytes;
    }

    @Test
    void packetsGoFromTheEnginesBuffersToTheRingAndResultsAreReadInPlace() throws Exception {
        RequestRing ring = RequestRing.create(dir.resolve("port-0.requests"), 1 << 16);
        ResultBoard board = ResultBoard.create(dir.resolve("job.results"), 1, 16, WINDOW, 64);
        IpcLink link = new IpcLink(ring, board, 0, 0, SLOT_BASE, WINDOW, new WorkerStatistics(), 0);
        ByteBuffer p0 = packet(1);
        ByteBuffer p3 = packet(50);
        onLoop(() -> {
            link.start(channel, receiver);
            link.send(0, p0, 24);
            link.send(3, p3, 40);
            link.flush();
        });
        assertThat(drain(ring)).containsExactly(prefix(p0, 24), prefix(p3, 40));
        assertThat(p0.limit()).as("the engine's buffer is left as it was").isEqualTo(64);

        board.publish(SLOT_BASE + 3, ByteBuffer.wrap(prefix(p3, 40)));
        board.publish(SLOT_BASE, ByteBuffer.wrap(prefix(p0, 24)));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (results.size() < 2 && System.nanoTime() < deadline) {
            onLoop(() -> link.doorbell(1)); // what a doorbell from the switch does: poll now
        }
        onLoop(() -> { });
        assertThat(results).containsExactlyInAnyOrder(prefix(p0, 24), prefix(p3, 40));
        assertThat(batches).isPositive();
        board.publish(SLOT_BASE, ByteBuffer.wrap(prefix(p3, 32)));
        while (results.size() < 3 && System.nanoTime() < deadline) {
            onLoop(() -> link.doorbell(1));
        }
        assertThat(results.get(2)).isEqualTo(prefix(p3, 32));
        int slot0 = results.get(0).length == 24 ? 0 : 1;
        assertThat(views.get(2)).as("slot 0's record view, made once").isSameAs(views.get(slot0));
        assertThat(views.get(2).isDirect()).as("the board's mapped memory itself").isTrue();
        onLoop(link::close);
    }

    @Test
    void aFullRingHoldsPacketsAndSendsThemInOrderOnceItHasRoom() throws Exception {
        RequestRing ring = RequestRing.create(dir.resolve("port-0.requests"), 1 << 8); // room for a few packets
        ResultBoard board = ResultBoard.create(dir.resolve("job.results"), 1, 16, WINDOW, 64);
        WorkerStatistics statistics = new WorkerStatistics();
        IpcLink link = new IpcLink(ring, board, 0, 0, SLOT_BASE, WINDOW, statistics, 0);
        ByteBuffer[] packets = {packet(0), packet(70), packet(140), packet(210)};
        onLoop(() -> {
            link.start(channel, receiver);
            for (int round = 0; round < 10; round++) {
                link.send(round % WINDOW, packets[round % WINDOW], 24); // a record takes 40 of the ring's 256 bytes
            }
            link.flush();
        });
        assertThat(statistics.ipcRingFull.sum()).as("packets that waited").isPositive();
        List<byte[]> read = new ArrayList<>(drain(ring));
        int first = read.size();
        assertThat(first).isLessThan(10);
        // The waiting packets go on the link's next poll, oldest first, once the ring has room again.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (read.size() < 10 && System.nanoTime() < deadline) {
            onLoop(() -> link.doorbell(1));
            read.addAll(drain(ring));
        }
        assertThat(read).hasSize(10);
        for (int i = 0; i < 10; i++) {
            assertThat(read.get(i)).as("packet %d", i).isEqualTo(prefix(packets[i % WINDOW], 24));
        }
        onLoop(link::close);
    }
}
