package io.switchml.ipc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The request ring, result board and wake flag as two mappings of the same files see them. */
class SharedMemoryPortTest {
    @TempDir
    Path dir;

    @Test
    void packetsCrossTheRingWithTheirSendersIdentityInOrder() throws Exception {
        Path file = dir.resolve("port-0.requests");
        RequestRing switchSide = RequestRing.create(file, 1 << 16);
        RequestRing workerSide = RequestRing.open(file);
        assertThat(Files.getPosixFilePermissions(file))
                .isEqualTo(Set.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE));
        ByteBuffer source = ByteBuffer.allocateDirect(100);
        for (int i = 0; i < 100; i++) {
            source.put(i, (byte) i);
        }
                assertThat(workerSide.offer(0x7f000001, 40_000, source)).isTrue();
        assertThat(workerSide.offer(0x7f000002, 40_001, source.slice(10, 7))).isTrue();

        List<String> seen = new ArrayList<>();
        int read = switchSide.drain((ip, port, packet) -> {
            assertThat(packet.order()).isEqualTo(ByteOrder.BIG_ENDIAN);
            seen.add(Integer.toHexString(ip) + ":" + port + " " + packet.remaining() + " first " + packet.get(packet.position()));
        }, 10);
        assertThat(read).isEqualTo(2);
        assertThat(seen).containsExactly("7f000001:40000 100 first 0", "7f000002:40001 7 first 10");
        assertThat(switchSide.drain((ip, port, packet) -> { }, 10)).isZero();
    }

    /** A worker killed between its claim and its commit (security round 4, finding 7) no longer wedges the port. */
    @Test
    void aRecordWhoseWriterDiedMidWriteIsSkippedAfterTheTimeoutAndTheRingGoesOn() {
        Path file = dir.resolve("port-0.requests");
        RequestRing switchSide = RequestRing.create(file, 1 << 16);
        RequestRing workerSide = RequestRing.open(file);
        // The dead writer: its own mapping, a claim it never commits.
        java.nio.MappedByteBuffer mapped = MappedFile.open(file);
        int capacity = mapped.capacity() - RingBufferDescriptor.TRAILER_LENGTH - RequestRing.FIELDS_BYTES;
        ManyToOneRingBuffer dead = new ManyToOneRingBuffer(new UnsafeBuffer(mapped, 0, capacity + RingBufferDescriptor.TRAILER_LENGTH));
        assertThat(dead.tryClaim(1, 64)).isNotNegative();
        ByteBuffer packet = ByteBuffer.allocateDirect(20);
        assertThat(workerSide.offer(0x7f000001, 40_000, packet)).isTrue();

        List<Integer> ports = new ArrayList<>();
        RequestRing.Consumer consumer = (ip, port, p) -> ports.add(port);
        long t0 = 1_000_000_000L;
        assertThat(switchSide.drain(consumer, 10, t0)).isZero();
        assertThat(switchSide.drain(consumer, 10, t0 + RequestRing.UNBLOCK_AFTER_NANOS / 2)).isZero();
        assertThat(ports).as("blocked behind the claim while a live writer could still be copying").isEmpty();
        assertThat(switchSide.drain(consumer, 10, t0 + RequestRing.UNBLOCK_AFTER_NANOS)).isEqualTo(1);
        assertThat(switchSide.unblocked()).isEqualTo(1);
        assertThat(switchSide.drain(consumer, 10, t0 + RequestRing.UNBLOCK_AFTER_NANOS + 1)).isEqualTo(1);
        assertThat(ports).containsExactly(40_000);
        // And it goes on as before.
        assertThat(workerSide.offer(0x7f000001, 40_001, packet)).isTrue();
        assertThat(switchSide.drain(consumer, 10, t0 + 2 * RequestRing.UNBLOCK_AFTER_NANOS)).isEqualTo(1);
        assertThat(ports).containsExactly(40_000, 40_001);
    }

    @Test
    void aFullRingRefusesInsteadOfOverwriting() {
        Path file = dir.resolve("port-0.requests");
        RequestRing ring = RequestRing.create(file, 1 << 13);
        assertThat(ring.maxPacketBytes()).isEqualTo(1024 - RequestRing.IDENTITY_BYTES);
        ByteBuffer source = ByteBuffer.allocateDirect(1000);
                int written = 0;
        while (ring.offer(1, 2, source)) {
            written++;
        }
        assertThat(written).isBetween(1, 8);
        AtomicInteger drained = new AtomicInteger();
        ring.drain((ip, port, packet) -> drained.incrementAndGet(), 100);
        assertThat(drained).hasValue(written);
        assertThat(ring.offer(1, 2, source)).isTrue();
    }

    @Test
    void aResultIsWrittenOnceAndReadByEveryMapping() {
        Path file = dir.resolve("job-1.results");
        ResultBoard switchSide = ResultBoard.create(file, 3, 8, 4, 1000);
        ResultBoard rank0 = ResultBoard.open(file);
        ResultBoard rank2 = ResultBoard.open(file);
        assertThat(rank0.slots()).isEqualTo(8);
        assertThat(rank0.attached(0)).isFalse();
        rank0.attach(0);
        assertThat(switchSide.attached(0)).isTrue();
        assertThat(switchSide.attached(2)).isFalse();

        ByteBuffer result = ByteBuffer.allocate(600);
        result.putInt(0, 0xCAFE).putInt(596, 42);
        assertThat(rank2.sequence(5)).isZero();
        switchSide.publish(5, result);
        for (ResultBoard reader : List.of(rank0, rank2)) {
            assertThat(reader.sequence(5)).isEqualTo(1);
            assertThat(reader.length(5)).isEqualTo(600);
            ByteBuffer record = reader.record(5);
            assertThat(record.getInt(0)).isEqualTo(0xCAFE);
            assertThat(record.getInt(596)).isEqualTo(42);
            assertThat(reader.sequence(4)).isZero();
        }
    }

    @Test
    void filesThatAreNotTheSwitchsAreRefused() throws Exception {
        Path junk = dir.resolve("junk");
        Files.write(junk, new byte[8192]);
        assertThatThrownBy(() -> ResultBoard.open(junk)).hasMessageContaining("not a switchml result board");
        assertThatThrownBy(() -> RequestRing.open(junk)).hasMessageContaining("not a switchml request ring");
        assertThatThrownBy(() -> ResultBoard.create(dir.resolve("b"), 2, 10, 4, 100)).hasMessageContaining("shape");
        ResultBoard board = ResultBoard.create(dir.resolve("c"), 2, 8, 4, 100);
        assertThatThrownBy(() -> board.attach(2)).hasMessageContaining("rank 2 outside the board's 0..1");
        assertThatThrownBy(() -> board.readerSleeping(0, 2)).hasMessageContaining("worker thread 2 outside");
    }

    @Test
    void aWakeUpIsTakenOncePerSleep() {
        ResultBoard board = ResultBoard.create(dir.resolve("job-2.results"), 2, 4, 2, 64);
        WakeFlag reader = board.readerSleeping(1, 1);
        WakeFlag writer = ResultBoard.open(dir.resolve("job-2.results")).readerSleeping(1, 1);
        assertThat(writer.takeWakeUp()).isFalse();
        reader.sleep();
        assertThat(board.readerSleeping(1, 0).asleep()).isFalse();
        assertThat(writer.asleep()).isTrue();
        assertThat(writer.takeWakeUp()).isTrue();
        assertThat(writer.takeWakeUp()).isFalse();
    }

    @Test
    void anIdleReaderSleepsAndAWakeUpMakesItPollAgain() throws Exception {
        RequestRing ring = RequestRing.create(dir.resolve("port-1.requests"), 1 << 16);
        ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor();
        try {
            CountDownLatch received = new CountDownLatch(1);
            IpcPoller poller = new IpcPoller(loop, () -> ring.drain((ip, port, p) -> received.countDown(), 16),
                    ring.readerSleeping(), TimeUnit.MICROSECONDS.toNanos(50), TimeUnit.SECONDS.toNanos(60));
            poller.start();
            waitUntil(() -> ring.readerSleeping().asleep(), "the idle reader to sleep");

            ByteBuffer packet = ByteBuffer.allocateDirect(16);
            assertThat(ring.offer(1, 1, packet)).isTrue();
            // Asleep with a 60 s backstop: only the wake-up the writer takes gets the packet read now.
            assertThat(received.await(200, TimeUnit.MILLISECONDS)).isFalse();
            assertThat(ring.readerSleeping().takeWakeUp()).isTrue();
            loop.execute(() -> poller.wake(true));
            assertThat(received.await(10, TimeUnit.SECONDS)).as("read after the wake-up").isTrue();
            waitUntil(() -> ring.readerSleeping().asleep(), "the reader to sleep again");
            poller.close();
        } finally {
            loop.shutdownNow();
            assertThat(loop.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
        }
    }

    private static void waitUntil(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(1);
        }
    }
}
