package io.switchml.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.channel.socket.DatagramPacket;
import org.junit.jupiter.api.Test;

import java.net.InetSocketAddress;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** The fault injector's decisions (seeded, at the rates asked, none when off) and its handling of buffers. */
class FaultInjectorTest {
    private static final InetSocketAddress SWITCH = new InetSocketAddress("127.0.0.1", 48864);
    private static final InetSocketAddress WORKER = new InetSocketAddress("127.0.0.1", 40000);

    @Test
    void theSameSeedRankAndThreadReplayTheSameDecisions() {
        FaultInjection faults = new FaultInjection(0.05, 0.05, 0.5, 2000, 1234);
        String a = decisions(new FaultInjector(faults, 3, 1, new WorkerStatistics()), 5000);
        String b = decisions(new FaultInjector(faults, 3, 1, new WorkerStatistics()), 5000);
        assertThat(a).isEqualTo(b);
        assertThat(decisions(new FaultInjector(faults, 3, 0, new WorkerStatistics()), 5000)).isNotEqualTo(a);
        assertThat(decisions(new FaultInjector(faults, 2, 1, new WorkerStatistics()), 5000)).isNotEqualTo(a);
        FaultInjection otherSeed = new FaultInjection(0.05, 0.05, 0.5, 2000, 1235);
        assertThat(decisions(new FaultInjector(otherSeed, 3, 1, new WorkerStatistics()), 5000)).isNotEqualTo(a);
        assertThat(FaultInjector.seed(1, 0, 1)).isNotEqualTo(FaultInjector.seed(1, 1, 0));
    }

    @Test
    void ratesAreRespected() {
        int datagrams = 200_000;
        WorkerStatistics stats = new WorkerStatistics();
        FaultInjector injector = new FaultInjector(new FaultInjection(0.05, 0.10, 0.25, 1000, 7), 0, 0, stats);
        long dropped = 0;
        long duplicated = 0;
        long copies = 0;
        long delayed = 0;
        long maxDelay = 0;
        double delaySum = 0;
        for (int i = 0; i < datagrams; i++) {
            int c = injector.copies();
            dropped += c == 0 ? 1 : 0;
            duplicated += c == 2 ? 1 : 0;
            for (int j = 0; j < c; j++) {
                copies++;
                long d = injector.delayNanos();
                if (d > 0) {
                    delayed++;
                    delaySum += d;
                    maxDelay = Math.max(maxDelay, d);
                }
            }
        }
        assertThat(dropped / (double) datagrams).isCloseTo(0.05, within(0.003));
        assertThat(duplicated / (double) (datagrams - dropped)).isCloseTo(0.10, within(0.004));
        assertThat(delayed / (double) copies).isCloseTo(0.25, within(0.005));
        assertThat(maxDelay).isLessThanOrEqualTo(TimeUnit.MICROSECONDS.toNanos(1000)).isGreaterThan(990_000);
        assertThat(delaySum / delayed).as("uniform over 0..1 ms").isCloseTo(500_000, within(10_000.0));
        WorkerStatistics.Snapshot s = stats.snapshot();
        assertThat(s.injectedDrops()).isEqualTo(dropped);
        assertThat(s.injectedDuplicates()).isEqualTo(duplicated);
        assertThat(s.injectedDelays()).isEqualTo(delayed);
    }

    @Test
    void zeroRatesDrawNothingAndChangeNothing() {
        RandomGenerator forbidden = () -> {
            throw new AssertionError("drew a random number with every rate 0");
        };
        FaultInjection off = new FaultInjection(0, 0, 1, 0, 99);
        assertThat(off.enabled()).isFalse();
        assertThat(FaultInjection.OFF.enabled()).isFalse();
        assertThat(new FaultInjection(0, 0, 0, 5000, 1).enabled()).as("delay rate 0").isFalse();
        assertThat(new FaultInjection(0, 0, 1, 0, 1).delays()).isFalse();
        WorkerStatistics stats = new WorkerStatistics();
        FaultInjector injector = new FaultInjector(off, forbidden, stats);
        for (int i = 0; i < 1000; i++) {
            assertThat(injector.copies()).isEqualTo(1);
            assertThat(injector.delayNanos()).isZero();
        }
        // Passed through as the very same objects, their reference counts untouched.
        EmbeddedChannel channel = new EmbeddedChannel(injector);
        ByteBuf out = packet(1);
        DatagramPacket in = new DatagramPacket(packet(2), WORKER, SWITCH);
        channel.writeOutbound(out);
        channel.writeInbound(in);
        assertThat((Object) channel.readOutbound()).isSameAs(out);
        assertThat((Object) channel.readInbound()).isSameAs(in);
        assertThat(out.refCnt()).isEqualTo(1);
        assertThat(in.refCnt()).isEqualTo(1);
        out.release();
        in.release();
        assertThat(stats.snapshot().injectedDrops() + stats.snapshot().injectedDuplicates()
                + stats.snapshot().injectedDelays()).isZero();
        assertThat(channel.finish()).isFalse();

        // A single non-zero rate draws once per datagram for that fault only.
        long[] draws = {0};
        SplittableRandom real = new SplittableRandom(5);
        RandomGenerator counting = () -> {
            draws[0]++;
            return real.nextLong();
        };
        FaultInjector dropsOnly = new FaultInjector(new FaultInjection(0.5, 0, 1, 0, 0), counting, new WorkerStatistics());
        for (int i = 0; i < 100; i++) {
            int c = dropsOnly.copies();
            if (c > 0) {
                dropsOnly.delayNanos();
            }
        }
        assertThat(draws[0]).isEqualTo(100);
    }

    @Test
    void defaultsAreOffAndTheSettingsAreRead() {
        SwitchMLConfig defaults = SwitchMLConfig.builder().rank(0).workers(1).build();
        assertThat(defaults.faultInjection().enabled()).isFalse();
        assertThat(defaults.faultInjection()).isEqualTo(new FaultInjection(0, 0, 1, 0, 0));
        SwitchMLConfig set = SwitchMLConfig.builder().rank(0).workers(1)
                .set(SwitchMLConfig.Key.FAULT_DROP_RATE, "0.01").set(SwitchMLConfig.Key.FAULT_DUPLICATE_RATE, "0.02")
                .set(SwitchMLConfig.Key.FAULT_DELAY_RATE, "0.5").set(SwitchMLConfig.Key.FAULT_MAX_DELAY_MICROS, "300")
                .set(SwitchMLConfig.Key.FAULT_SEED, "-8").build();
        assertThat(set.faultInjection()).isEqualTo(new FaultInjection(0.01, 0.02, 0.5, 300, -8));
        FaultInjection f = new FaultInjection(0.03, 0, 1, 10, 4);
        assertThat(SwitchMLConfig.builder().rank(0).workers(1).faultInjection(f).build().faultInjection()).isEqualTo(f);
        assertThat(set.toMap()).containsEntry("switchml.faultDropRate", "0.01").containsEntry("switchml.faultSeed", "-8");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1).set(SwitchMLConfig.Key.FAULT_DROP_RATE, "1.5").build())
                .hasMessageContaining("switchml.faultDropRate = 1.5 outside 0..1");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1).set(SwitchMLConfig.Key.FAULT_DUPLICATE_RATE, "lots").build())
                .hasMessageContaining("switchml.faultDuplicateRate must be a number");
        assertThatThrownBy(() -> SwitchMLConfig.builder().rank(0).workers(1).set(SwitchMLConfig.Key.FAULT_MAX_DELAY_MICROS, "-1").build())
                .hasMessageContaining("switchml.faultMaxDelayMicros = -1");
    }

    @Test
    void dropsReleaseAndDuplicatesCarryTheSameContent() {
        WorkerStatistics stats = new WorkerStatistics();
        EmbeddedChannel dropping = new EmbeddedChannel(new FaultInjector(new FaultInjection(1, 0, 1, 0, 1), 0, 0, stats));
        ByteBuf out = packet(1);
        DatagramPacket in = new DatagramPacket(packet(2), WORKER, SWITCH);
        dropping.writeOutbound(out);
        dropping.writeInbound(in);
        assertThat((Object) dropping.readOutbound()).isNull();
        assertThat((Object) dropping.readInbound()).isNull();
        assertThat(out.refCnt()).isZero();
        assertThat(in.refCnt()).isZero();
        assertThat(stats.snapshot().injectedDrops()).isEqualTo(2);

        EmbeddedChannel duplicating = new EmbeddedChannel(new FaultInjector(new FaultInjection(0, 1, 1, 0, 1), 0, 0, stats));
        out = packet(3);
        in = new DatagramPacket(packet(4), WORKER, SWITCH);
        duplicating.writeOutbound(out);
        duplicating.writeInbound(in);
        ByteBuf out1 = duplicating.readOutbound();
        ByteBuf out2 = duplicating.readOutbound();
        DatagramPacket in1 = duplicating.readInbound();
        DatagramPacket in2 = duplicating.readInbound();
        assertThat(out1).isEqualTo(packet(3)).isEqualTo(out2);
        assertThat(in1.content()).isEqualTo(packet(4)).isEqualTo(in2.content());
        assertThat(in2.sender()).isEqualTo(SWITCH);
        assertThat(out.refCnt()).as("an outgoing duplicate is a copy: the lane rewrites its buffers").isZero();
        out1.release();
        out2.release();
        in1.release();
        in2.release();
        assertThat(out.refCnt()).isZero();
        assertThat(in.refCnt()).isZero();
        assertThat(stats.snapshot().injectedDuplicates()).isEqualTo(2);
    }

    @Test
    void delayedDatagramsComeOnTheChannelsLoopAndThoseStillHeldAtCloseAreReleased() {
        WorkerStatistics stats = new WorkerStatistics();
        FaultInjector injector = new FaultInjector(new FaultInjection(0, 0, 1, 1000, 1), 0, 0, stats);
        EmbeddedChannel channel = new EmbeddedChannel(injector);
        channel.freezeTime();
        int n = 50;
        ByteBuf[] sent = new ByteBuf[n];
        for (int i = 0; i < n; i++) {
            sent[i] = packet(i);
            channel.writeAndFlush(sent[i], channel.voidPromise()); // as the lane writes
            channel.writeInbound(new DatagramPacket(packet(1000 + i), WORKER, SWITCH));
        }
        long delayed = stats.snapshot().injectedDelays();
        assertThat(delayed).isGreaterThan(2 * n - 5); // a delay of exactly 0 ns is possible, hardly likely
        assertThat(injector.heldCount()).isEqualTo((int) delayed);
        assertThat((Object) channel.readOutbound()).isNull();
        channel.advanceTimeBy(500, TimeUnit.MICROSECONDS);
        channel.runScheduledPendingTasks();
        int early = drain(channel);
        assertThat(early).as("about half are due after 500 us").isBetween(2 * n / 4, 2 * n * 3 / 4);
        assertThat(injector.heldCount()).isEqualTo(2 * n - early);
        // Order differs from the sending order somewhere: delays reorder.
        channel.advanceTimeBy(400, TimeUnit.MICROSECONDS);
        channel.runScheduledPendingTasks();
        drain(channel);
        int stillHeld = injector.heldCount();
        assertThat(stillHeld).isPositive();
        channel.close();
        assertThat(injector.heldCount()).isZero();
        for (ByteBuf b : sent) {
            assertThat(b.refCnt()).as("released once sent, dropped or closed").isZero();
        }
        channel.advanceTimeBy(1, TimeUnit.SECONDS);
        channel.runScheduledPendingTasks();
        assertThat((Object) channel.readOutbound()).isNull();
        assertThat((Object) channel.readInbound()).isNull();
    }

    @Test
    void delaysReorder() {
        EmbeddedChannel channel = new EmbeddedChannel(
                new FaultInjector(new FaultInjection(0, 0, 1, 1000, 3), 0, 0, new WorkerStatistics()));
        channel.freezeTime();
        for (int i = 0; i < 20; i++) {
            channel.writeOutbound(packet(i));
        }
        channel.advanceTimeBy(2, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        int[] order = new int[20];
        for (int i = 0; i < 20; i++) {
            ByteBuf b = channel.readOutbound();
            order[i] = b.getInt(0);
            b.release();
        }
        assertThat(order).containsExactlyInAnyOrder(java.util.stream.IntStream.range(0, 20).toArray());
        assertThat(order).isNotEqualTo(java.util.stream.IntStream.range(0, 20).toArray());
    }

    private static int drain(EmbeddedChannel channel) {
        int count = 0;
        for (Object m; (m = channel.readOutbound()) != null; count++) {
            io.netty.util.ReferenceCountUtil.release(m);
        }
        for (Object m; (m = channel.readInbound()) != null; count++) {
            io.netty.util.ReferenceCountUtil.release(m);
        }
        return count;
    }

    private static ByteBuf packet(int id) {
        ByteBuf b = Unpooled.directBuffer(16);
        b.writeInt(id).writeInt(~id).writeLong(id * 31L);
        return b;
    }

    /** A compact trace of the decisions for {@code datagrams} datagrams. */
    private static String decisions(FaultInjector injector, int datagrams) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < datagrams; i++) {
            int c = injector.copies();
            s.append(c);
            for (int j = 0; j < c; j++) {
                s.append(':').append(injector.delayNanos());
            }
            s.append(' ');
        }
        return s.toString();
    }
}
