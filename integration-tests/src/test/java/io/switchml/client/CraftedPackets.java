package io.switchml.client;

import io.netty.buffer.Unpooled;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PayloadSize;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Well-formed aggregation packets that a worker sends from its own registered socket, aimed at
 * slots that are not its job's, and the wait until the switch has counted them.
 */
final class CraftedPackets {
    /** Packets sent before waiting for the switch to count them, so that no socket buffer overflows. */
    private static final int BATCH = 16;
    private static final long COUNT_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private CraftedPackets() {
    }

    /**
     * Sends {@code count} contributions with job number {@code jobNumber} to slots
     * {@code firstSlot, firstSlot + 1, ...} (wrapping at {@code firstSlot + slots}), both sets, random
     * payloads and a plausible exponent, from worker thread 0 of {@code sender}; returns once the
     * switch's counter {@code dropCounter} has grown by {@code count}.
     */
    /**
     * Sends {@code datagram} (position to limit) to the switch from worker thread 0's socket, the
     * source the switch knows as this rank, past any fault injection (the first handler of the pipeline).
     */
    static void sendRaw(SwitchMLContext sender, ByteBuffer datagram) {
        sender.session().sockets().channel(0).pipeline().firstContext()
                .writeAndFlush(Unpooled.copiedBuffer(datagram)).syncUninterruptibly();
    }

    static void sendAndAwaitDrops(AggregationSwitch dataplane, SwitchMLContext sender, PayloadSize size, int jobNumber,
                                  int firstSlot, int slots, int count, String dropCounter, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        ByteBuffer datagram = ByteBuffer.allocate(size.packetBytes());
        AggregationPacket packet = new AggregationPacket().wrap(datagram, 0);
        long start = dataplane.counters().get(dropCounter);
        for (int i = 0; i < count; i++) {
            packet.header(size, jobNumber, random.nextInt(), firstSlot + i % slots, i / slots % 2, random.nextInt(-24, 25), 0);
            for (int e = 0; e < size.elements(); e++) {
                packet.element(e, random.nextInt());
            }
            datagram.clear();
            sendRaw(sender, datagram);
            if ((i + 1) % BATCH == 0 || i + 1 == count) {
                awaitCounter(dataplane, dropCounter, start + i + 1);
            }
        }
    }

    /** Waits until the switch's counter reaches {@code value}, for at most 10 s. */
    static void awaitCounter(AggregationSwitch dataplane, String counter, long value) {
        long deadline = System.nanoTime() + COUNT_WAIT_NANOS;
        while (dataplane.counters().get(counter) < value && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
        assertThat(dataplane.counters().get(counter)).as(counter).isEqualTo(value);
    }
}
