package io.switchml.client;

import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.JobSpec;
import io.switchml.dataplane.WorkerEndpoint;
import io.switchml.udp.Offload;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The switch under attack: while three workers run a series of all-reduces through it, attacker
 * threads send it more than 100,000 malformed and spoofed datagrams from sources that are in no
 * worker table. Every all-reduce stays exact (bit for bit, on every worker), the switch keeps
 * serving, and its counters account for every datagram: each attacker datagram that reached the
 * switch is in exactly the drop counter the wire format predicts, and none became a contribution.
 *
 * <p>The attack alternates bursts of fuzz (truncated and oversized packets, random bytes, wrong
 * msg_type, unused bits, unknown jobs, wrong size codes, slots out of range) with bursts of perfect
 * contributions to the live job's slots, on the ports that own them, with random payloads: only the
 * worker table stands between those and the job's sums. Everything the attacker sends is fixed by
 * the seed; only the interleaving with the workers depends on timing.
 *
 * <p>The attacker paces itself on the switch's drop counters (at most {@link #MAX_IN_FLIGHT}
 * datagrams sent and not yet counted, {@link #MAX_LARGE_IN_FLIGHT} of them large), so that the
 * switch's socket buffers never overflow and the accounting is exact: every datagram sent is
 * counted. Should the kernel drop some at the switch's sockets all the same (visible in
 * {@code /proc/net/udp}), the test says so and allows at most that many missing.
 */
class SwitchUnderAttackTest {
    private static final long SEED = 0x5A17C4_2021L;
    private static final int WORKERS = 3;
    private static final int SWITCH_PORTS = 2;
    private static final int WORKER_THREADS = 2;
    private static final int ELEMENTS_PER_PACKET = 2048;
    private static final int ATTACKERS = 2;
    /** Source sockets per attacker, each an (address, port) the switch has never heard of. */
    private static final int SOURCES_PER_ATTACKER = 3;
    private static final int DATAGRAMS_PER_ATTACKER = 56_000;
    /** Datagrams per burst; bursts alternate between fuzz and spoofed contributions. */
    private static final int BURST = 1_000;
    private static final int REQUIRED_DROPS = 100_000;
    /** Attacker datagrams sent and not yet counted by the switch, at most. */
    private static final int MAX_IN_FLIGHT = 64;
    /** The same for datagrams above {@link #LARGE} bytes (each takes 128 KiB of socket buffer). */
    private static final int MAX_LARGE_IN_FLIGHT = 8;
    private static final int LARGE = 16_384;
    private static final long STALL_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
    /** Tensor lengths: one element, just over a packet, two windows and a bit, and a long odd one. */
    private static final int[] SIZES = {1, 2049, 2 * 2 * 64 * 2048 + 13, 300_001};

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void aFloodOfMalformedAndSpoofedPacketsChangesNoResultAndIsCountedPacketByPacket() throws Exception {
        long started = System.nanoTime();
        // The workers send single datagrams: the kernel counts a drop at a full socket per datagram, and a run sent
        // as one (docs/ARCHITECTURE.md section 17) reaches the switch's GRO socket whole, so one drop would lose
        // several packets and this test's count of datagrams against packets could not balance.
        try (LocalCluster cluster = new LocalCluster(WORKERS, SWITCH_PORTS, b -> b
                .threads(WORKER_THREADS).elementsPerPacket(ELEMENTS_PER_PACKET)
                .udpSegmentation(Offload.OFF)
                .operationTimeout(Duration.ofSeconds(15)))) {
            AggregationSwitch dataplane = cluster.service.dataplane();
            int[] switchPorts = dataplane.ports();
            AllReduceExactnessTest.checkFloatSum(cluster, SEED, 5000, ELEMENTS_PER_PACKET); // warm-up
            JobSpec job = liveJob(dataplane);
            HostileDatagrams.Target target = new HostileDatagrams.Target(job.jobNumber(), job.size(), job.slots(),
                    job.slotsPerThread(), switchPorts.length);

            InetAddress loopback = InetAddress.getByName("127.0.0.1");
            List<DatagramChannel> sources = new ArrayList<>();
            try {
                for (int i = 0; i < ATTACKERS * SOURCES_PER_ATTACKER; i++) {
                    DatagramChannel channel = DatagramChannel.open();
                    sources.add(channel);
                    channel.bind(new InetSocketAddress(loopback, 0));
                }
                // The premise: every attacker source is outside the worker table.
                Set<Integer> workerPorts = new HashSet<>();
                for (WorkerEndpoint endpoint : job.endpoints()) {
                    assertThat(endpoint.address()).isEqualTo(loopback);
                    for (int port : endpoint.ports()) {
                        workerPorts.add(port);
                    }
                }
                for (DatagramChannel source : sources) {
                    assertThat(workerPorts).doesNotContain(((InetSocketAddress) source.getLocalAddress()).getPort());
                }

                Map<String, Long> before = dataplane.counters();
                List<WorkerStatistics.Snapshot> workersBefore = workerStatistics(cluster);
                long kernelDropsBefore = kernelDrops(switchPorts);
                long backlogDropsBefore = backlogDrops();

                Pacer pacer = new Pacer(() -> attackOutcomes(dataplane.counters()), attackOutcomes(before));
                SplittableRandom seeds = new SplittableRandom(SEED);
                ExecutorService pool = Executors.newFixedThreadPool(ATTACKERS + 1);
                AtomicBoolean attackOver = new AtomicBoolean();
                AtomicInteger operationsDuringAttack = new AtomicInteger();
                long attackStarted = System.nanoTime();
                long attackNanos;
                List<Tally> tallies = new ArrayList<>();
                int operations;
                try {
                    List<Future<Tally>> attackers = new ArrayList<>();
                    for (int a = 0; a < ATTACKERS; a++) {
                        HostileDatagrams datagrams = new HostileDatagrams(seeds.split(), target);
                        List<DatagramChannel> mine = sources.subList(a * SOURCES_PER_ATTACKER, (a + 1) * SOURCES_PER_ATTACKER);
                        SplittableRandom choices = seeds.split();
                        attackers.add(pool.submit(() -> attack(datagrams, choices, mine, loopback, switchPorts, pacer)));
                    }
                    // The workers: all-reduces of every size and both types, until the attack is over
                    // (and at least one full round), each checked bit for bit.
                    Future<Integer> work = pool.submit(() -> {
                        long seed = SEED + 1;
                        int done = 0;
                        do {
                            for (int size : SIZES) {
                                AllReduceExactnessTest.checkFloatSum(cluster, seed, size, ELEMENTS_PER_PACKET);
                                AllReduceExactnessTest.checkIntSum(cluster, seed, size);
                                seed++;
                                done += 2;
                                if (!attackOver.get()) {
                                    operationsDuringAttack.addAndGet(2);
                                }
                            }
                        } while (!attackOver.get());
                        return done;
                    });
                    for (Future<Tally> attacker : attackers) {
                        tallies.add(attacker.get(90, TimeUnit.SECONDS));
                    }
                    attackNanos = System.nanoTime() - attackStarted;
                    attackOver.set(true);
                    operations = work.get(90, TimeUnit.SECONDS);
                } finally {
                    attackOver.set(true);
                    pool.shutdownNow();
                    assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
                }
                Tally attack = Tally.sum(tallies);

                // Let the switch finish what is queued, then read its counters at rest.
                Map<String, Long> after = quiescentCounters(dataplane, attackOutcomes(before), attack.sent, switchPorts,
                        kernelDropsBefore);
                long kernelDropsAfter = kernelDrops(switchPorts);
                long backlogLost = backlogDrops() - backlogDropsBefore;
                Map<String, Long> delta = new TreeMap<>();
                after.forEach((name, value) -> delta.put(name, value - before.getOrDefault(name, 0L)));
                List<WorkerStatistics.Snapshot> workersAfter = workerStatistics(cluster);

                assertThat(kernelDropsBefore).as("drop counts of the switch's sockets in /proc/net/udp").isNotNegative();
                assertThat(kernelDropsAfter).as("drop counts of the switch's sockets in /proc/net/udp").isNotNegative();
                long kernelLost = kernelDropsAfter - kernelDropsBefore;
                long counted = attackOutcomes(delta);
                long workerSent = 0;
                long distinctWorkerPackets = 0;
                for (int r = 0; r < WORKERS; r++) {
                    long sent = workersAfter.get(r).packetsSent() - workersBefore.get(r).packetsSent();
                    workerSent += sent;
                    distinctWorkerPackets += sent - (workersAfter.get(r).retransmissions() - workersBefore.get(r).retransmissions());
                }
                long workerReceived = delta.get("contributions") + delta.get("retransmissions_answered")
                        + delta.get("retransmissions_dropped");
                long attackLost = attack.sent - counted;
                long workersLost = workerSent - workerReceived;
                System.out.printf("switch under attack: %d attack datagrams sent (%d bytes, %d send errors, %d pacing stalls)"
                                + " in %.2f s by %d threads from %d sources to %d switch ports; %d all-reduces ran alongside"
                                + " (%d while the attack lasted)%n",
                        attack.sent, attack.bytes, attack.sendErrors, pacer.stalls(), attackNanos / 1e9, ATTACKERS,
                        sources.size(), switchPorts.length, operations, operationsDuringAttack.get());
                System.out.printf("  sent by kind: %s%n", attack.byKind);
                System.out.printf("  expected drops: %s%n", attack.expectedDrops);
                System.out.printf("  switch counter deltas: %s%n", nonZero(delta));
                System.out.printf("  attack datagrams counted in drops_*: %d of %d sent; worker packets received: %d of %d"
                                + " sent; kernel drops at the switch's sockets: %d (and in this host's input backlogs: %d)%n",
                        counted, attack.sent, workerReceived, workerSent, kernelLost, backlogLost);

                // 1. Every counter event is accounted for: each received datagram ends in exactly one
                //    of ingress simulator, a drop reason, a contribution or a retransmission outcome.
                assertAccountingIdentity(after, "since the switch started");
                assertAccountingIdentity(delta, "during the attack");

                // 2. No attacker datagram was applied: the contributions are exactly the workers'
                //    distinct packets (every packet sent, less the retransmissions of one sent before).
                assertThat(delta.get("contributions")).as("contributions during the attack")
                        .isEqualTo(distinctWorkerPackets);

                // 3. Every datagram sent to the switch is either counted by it or dropped by the kernel
                //    at its sockets when their buffers are full (loopback loses datagrams nowhere else,
                //    but for the per-CPU input backlog, whose drops are host-wide and normally none).
                //    The attacker's datagrams that were counted are all drops; the workers' are all
                //    contributions or retransmissions.
                long unaccounted = attack.sent + workerSent - delta.get("packets_received") - kernelLost;
                assertThat(unaccounted).as("datagrams sent to the switch (attack %d + workers %d) - packets_received %d"
                                + " - kernel drops at its sockets %d; input backlog drops on this host: %d",
                        attack.sent, workerSent, delta.get("packets_received"), kernelLost, backlogLost)
                        .isBetween(0L, backlogLost);
                assertThat(attackLost).as("attack datagrams lost in the kernel (%d; worker packets lost: %d)",
                        attackLost, workersLost).isBetween(0L, kernelLost + backlogLost);
                assertThat(workersLost).as("worker packets lost in the kernel").isBetween(0L, kernelLost + backlogLost);
                if (kernelLost > 0) {
                    System.out.printf("  NOTE: the kernel dropped %d datagrams at the switch's full sockets: %d of the"
                            + " attack's, %d of the workers' (retransmitted)%n", kernelLost, attackLost, workersLost);
                }

                // 4. ... and each counted attack datagram is in the drop counter the wire format predicts.
                assertThat(attack.sent).isGreaterThanOrEqualTo(REQUIRED_DROPS);
                assertThat(counted).as("attack datagrams counted as drops").isGreaterThanOrEqualTo(REQUIRED_DROPS);
                Set<String> reasons = new HashSet<>(attack.expectedDrops.keySet());
                delta.keySet().stream().filter(name -> name.startsWith("drops_")).forEach(reasons::add);
                for (String reason : reasons) {
                    long expected = attack.expectedDrops.getOrDefault(reason, 0L);
                    assertThat(delta.getOrDefault(reason, 0L)).as(reason).isBetween(expected - attackLost, expected);
                }
                assertThat(delta.get("drops_unknown_source")).as("well-formed spoofed packets stopped by the worker table")
                        .isGreaterThanOrEqualTo(attack.byKind.get(HostileDatagrams.Kind.SPOOFED_CONTRIBUTION) - attackLost);

                // 5. The workers saw nothing of it.
                for (int r = 0; r < WORKERS; r++) {
                    assertThat(workersAfter.get(r).operationTimeouts()).as("rank %d operation timeouts", r).isZero();
                    assertThat(workersAfter.get(r).malformedResults()).as("rank %d malformed results", r).isZero();
                }
                assertThat(operationsDuringAttack.get()).as("all-reduces completed while the attack ran").isPositive();

                // 6. The switch still serves: one more all-reduce of each type, exact and quick.
                long beforeFinal = System.nanoTime();
                AllReduceExactnessTest.checkFloatSum(cluster, SEED + 1000, 300_001, ELEMENTS_PER_PACKET);
                AllReduceExactnessTest.checkIntSum(cluster, SEED + 1000, 300_001);
                long finalMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - beforeFinal);
                Map<String, Long> end = dataplane.counters();
                assertThat(end.get("contributions")).isGreaterThan(after.get("contributions"));
                assertThat(sumDrops(end)).as("drops after the attack").isEqualTo(sumDrops(after));
                assertThat(finalMillis).as("final float32 + int32 all-reduce of 300,001 elements, ms").isLessThan(10_000);
                System.out.printf("  after the attack: float32 + int32 all-reduce of 300001 elements, exact, in %d ms;"
                        + " whole test %.1f s%n", finalMillis, (System.nanoTime() - started) / 1e9);
            } finally {
                for (DatagramChannel source : sources) {
                    source.close();
                }
            }
        }
    }

    /**
     * The identity SwitchProgram keeps: it counts every datagram in packets_received, then exactly
     * one of: the ingress drop simulator, one drop reason (validation failed), a contribution (a new
     * contribution: consumed or multicast), or a retransmission (answered or dropped).
     */
    private static void assertAccountingIdentity(Map<String, Long> counters, String when) {
        long outcomes = counters.get("ingress_simulated_drops") + attackOutcomes(counters) + counters.get("contributions")
                + counters.get("retransmissions_answered") + counters.get("retransmissions_dropped");
        assertThat(counters.get("packets_received"))
                .as("packets_received = ingress_simulated_drops + drops_* + ipc_wake_ups_received + contributions"
                        + " + retransmissions_answered + retransmissions_dropped, %s: %s", when, nonZero(counters))
                .isEqualTo(outcomes);
    }

    /** One attacker: alternating bursts of fuzz and spoofed contributions, paced on the switch's counters. */
    private static Tally attack(HostileDatagrams datagrams, SplittableRandom choices, List<DatagramChannel> sources,
                                InetAddress switchAddress, int[] switchPorts, Pacer pacer) {
        InetSocketAddress[] targets = new InetSocketAddress[switchPorts.length];
        for (int i = 0; i < targets.length; i++) {
            targets[i] = new InetSocketAddress(switchAddress, switchPorts[i]);
        }
        Tally tally = new Tally();
        for (int i = 0; i < DATAGRAMS_PER_ATTACKER; i++) {
            boolean spoofBurst = (i / BURST) % 2 == 1;
            if (spoofBurst) {
                datagrams.nextSpoof();
            } else {
                datagrams.nextFuzz();
            }
            ByteBuffer datagram = datagrams.datagram();
            String expected = HostileDatagrams.expectedDrop(datagram);
            int length = datagram.remaining();
            DatagramChannel source = sources.get(choices.nextInt(sources.size()));
            pacer.awaitRoom(length);
            try {
                source.send(datagram, targets[datagrams.portIndex()]);
            } catch (IOException e) {
                tally.sendErrors++;
                continue;
            }
            pacer.sent();
            tally.sent++;
            tally.bytes += length;
            tally.byKind.merge(datagrams.kind(), 1L, Long::sum);
            tally.expectedDrops.merge(expected, 1L, Long::sum);
        }
        return tally;
    }

    /** What one attacker sent, and the drop counters its datagrams must land in. */
    private static final class Tally {
        long sent;
        long bytes;
        long sendErrors;
        final Map<HostileDatagrams.Kind, Long> byKind = new EnumMap<>(HostileDatagrams.Kind.class);
        final Map<String, Long> expectedDrops = new TreeMap<>();

        static Tally sum(List<Tally> tallies) {
            Tally total = new Tally();
            for (Tally t : tallies) {
                total.sent += t.sent;
                total.bytes += t.bytes;
                total.sendErrors += t.sendErrors;
                t.byKind.forEach((k, v) -> total.byKind.merge(k, v, Long::sum));
                t.expectedDrops.forEach((k, v) -> total.expectedDrops.merge(k, v, Long::sum));
            }
            return total;
        }
    }

    /**
     * Keeps at most {@link #MAX_IN_FLIGHT} attacker datagrams sent but not yet counted by the
     * switch, so that the attack does not overflow the switch's socket buffer. When the count makes
     * no progress for {@link #STALL_NANOS}, the missing datagrams are presumed lost and the attack
     * goes on (they are then looked for in the kernel's drop count).
     */
    private static final class Pacer {
        private final java.util.function.LongSupplier drops;
        private final long dropsBefore;
        private final AtomicLong sent = new AtomicLong();
        private long lastCounted;
        private long lastProgress = System.nanoTime();
        private long presumedLost;
        private int stalls;

        Pacer(java.util.function.LongSupplier drops, long dropsBefore) {
            this.drops = drops;
            this.dropsBefore = dropsBefore;
        }

        void sent() {
            sent.incrementAndGet();
        }

        synchronized int stalls() {
            return stalls;
        }

        void awaitRoom(int length) {
            int limit = length > LARGE ? MAX_LARGE_IN_FLIGHT : MAX_IN_FLIGHT;
            while (!hasRoom(limit)) {
                LockSupport.parkNanos(20_000);
            }
        }

        private synchronized boolean hasRoom(int limit) {
            long counted = drops.getAsLong() - dropsBefore;
            long now = System.nanoTime();
            if (counted != lastCounted) {
                lastCounted = counted;
                lastProgress = now;
            }
            long unaccounted = sent.get() - counted;
            // Datagrams presumed lost that show up after all no longer count as lost.
            presumedLost = Math.min(presumedLost, Math.max(0, unaccounted));
            if (unaccounted - presumedLost < limit) {
                return true;
            }
            if (now - lastProgress > STALL_NANOS) {
                stalls++;
                presumedLost = unaccounted;
                lastProgress = now;
                return true;
            }
            return false;
        }
    }

    /**
     * The switch's counters once it has caught up: every attacker datagram is counted or dropped by
     * the kernel (or 10 s have passed), and nothing has changed for 200 ms. The workers are idle by
     * then (their last all-reduce has returned on every worker).
     */
    private static Map<String, Long> quiescentCounters(AggregationSwitch dataplane, long dropsBefore, long attackSent,
                                                       int[] switchPorts, long kernelDropsBefore) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        Map<String, Long> last = dataplane.counters();
        long stableSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            Thread.sleep(20);
            Map<String, Long> now = dataplane.counters();
            long kernelLost = kernelDropsBefore < 0 ? 0 : Math.max(0, kernelDrops(switchPorts) - kernelDropsBefore);
            boolean caughtUp = attackOutcomes(now) - dropsBefore + kernelLost >= attackSent;
            if (!now.equals(last)) {
                last = now;
                stableSince = System.nanoTime();
            } else if (caughtUp && System.nanoTime() - stableSince > TimeUnit.MILLISECONDS.toNanos(200)) {
                break;
            }
        }
        return last;
    }

    static JobSpec liveJob(AggregationSwitch dataplane) {
        List<JobSpec> jobs = new ArrayList<>();
        for (int number = 0; number < 256; number++) {
            Optional<JobSpec> job = dataplane.job(number);
            job.ifPresent(jobs::add);
        }
        assertThat(jobs).as("installed jobs").hasSize(1);
        return jobs.get(0);
    }

    private static List<WorkerStatistics.Snapshot> workerStatistics(LocalCluster cluster) {
        List<WorkerStatistics.Snapshot> snapshots = new ArrayList<>();
        for (SwitchMLContext context : cluster.contexts) {
            snapshots.add(context.statistics().snapshot());
        }
        return snapshots;
    }

    /** Where an attack datagram that reached the switch ends: a drop, or a (harmless) shared-memory wake-up. */
    private static long attackOutcomes(Map<String, Long> counters) {
        return sumDrops(counters) + counters.getOrDefault("ipc_wake_ups_received", 0L);
    }

    private static long sumDrops(Map<String, Long> counters) {
        long sum = 0;
        for (Map.Entry<String, Long> e : counters.entrySet()) {
            if (e.getKey().startsWith("drops_")) {
                sum += e.getValue();
            }
        }
        return sum;
    }

    private static Map<String, Long> nonZero(Map<String, Long> counters) {
        Map<String, Long> shown = new TreeMap<>();
        counters.forEach((name, value) -> {
            if (value != 0) {
                shown.put(name, value);
            }
        });
        return shown;
    }

    /**
     * Packets this host dropped because a CPU's input backlog was full (the second column of
     * /proc/net/softnet_stat, summed over the CPUs): loopback traffic passes that queue. Host-wide;
     * 0 when it cannot be read.
     */
    private static long backlogDrops() {
        long drops = 0;
        try {
            for (String line : Files.readAllLines(Path.of("/proc/net/softnet_stat"))) {
                String[] fields = line.trim().split("\\s+");
                if (fields.length > 1) {
                    drops += Long.parseLong(fields[1], 16);
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return drops;
    }

    /**
     * Datagrams the kernel dropped at the switch's sockets (127.0.0.1, these ports) because their
     * receive buffers were full: the last column of /proc/net/udp. -1 when it cannot be read.
     */
    private static long kernelDrops(int[] ports) {
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of("/proc/net/udp"));
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        Set<String> locals = new HashSet<>();
        for (int port : ports) {
            locals.add(String.format("0100007F:%04X", port)); // 127.0.0.1 on a little-endian host
            locals.add(String.format("7F000001:%04X", port)); // and on a big-endian one
        }
        long drops = 0;
        int found = 0;
        for (String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length > 2 && locals.contains(fields[1].toUpperCase(java.util.Locale.ROOT))) {
                drops += Long.parseLong(fields[fields.length - 1]);
                found++;
            }
        }
        return found == ports.length ? drops : -1;
    }
}
