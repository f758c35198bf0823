package io.switchml.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchMLException;
import io.switchml.api.WorkerFailedException;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.SwitchConfig;
import io.switchml.ipc.RequestRing;
import io.switchml.ipc.ResultBoard;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;

/**
 * Workers on the switch's host reach it through its shared-memory port (docs/ARCHITECTURE.md
 * section 11): the same switch program runs over it, so results are the reference model's, bit for
 * bit, as over UDP; a job may mix both; the choice is reported; failures surface as over UDP; and
 * idle readers sleep.
 */
class SharedMemoryTransportTest {
    private static final SwitchMLConfig.Transport IPC = SwitchMLConfig.Transport.IPC;

    @Test
    void resultsAreExactOverSharedMemoryAndWrittenOnceForAllWorkers() {
        try (LocalCluster cluster = new LocalCluster(3, 1, b -> b.transport(IPC))) {
            long seed = 11;
            for (int size : new int[]{1, 2047, 2049, 64 * 2048 + 13, 300_001}) {
                AllReduceExactnessTest.checkFloatSum(cluster, seed, size, TestDefaults.ELEMENTS_PER_PACKET);
                AllReduceExactnessTest.checkIntSum(cluster, seed++, size);
            }
            for (SwitchMLContext context : cluster.contexts) {
                assertThat(context.statistics().transport()).isEqualTo("ipc");
            }
            var counters = cluster.service.dataplane().counters();
            // Once per completed slot, and once per answered retransmission (a timeout on a loaded host).
            assertThat(counters.get("ipc_results")).isPositive()
                    .isEqualTo(counters.get("results_sent") + counters.get("retransmissions_answered"));
            assertThat(counters.get("packets_sent")).as("no result went over UDP").isZero();
        }
    }

    @Test
    void severalThreadsAndSwitchPortsWithLoopbackSizedPackets() {
        try (LocalCluster cluster = new LocalCluster(2, 2, b -> b.transport(IPC).threads(3).elementsPerPacket(15360)
                .slotsPerThread(8))) {
            AllReduceExactnessTest.checkFloatSum(cluster, 5, 15360 * 40 + 7, 15360);
            AllReduceExactnessTest.checkIntSum(cluster, 6, 15360 * 13 + 1);
        }
    }

    @Test
    void aJobMixesWorkersOnSharedMemoryAndOverUdp() {
        try (LocalCluster cluster = new LocalCluster(3, 2, b -> b.transport(
                b.build().rank() == 1 ? SwitchMLConfig.Transport.UDP : IPC).threads(2))) {
            AllReduceExactnessTest.checkFloatSum(cluster, 21, 100_003, TestDefaults.ELEMENTS_PER_PACKET);
            AllReduceExactnessTest.checkIntSum(cluster, 22, 50_001);
            assertThat(cluster.contexts.get(1).statistics().transport()).isEqualTo("udp");
            assertThat(cluster.contexts.get(2).statistics().transport()).isEqualTo("ipc");
            var counters = cluster.service.dataplane().counters();
            assertThat(counters.get("ipc_results")).isPositive();
            assertThat(counters.get("packets_sent")).as("rank 1's results").isPositive();
        }
    }

    @Test
    void leavesServeTheirRanksOnSharedMemoryAndTalkToTheSpineOverUdp() {
        try (LocalCluster tree = LocalCluster.hierarchy(2, 4, 1, b -> b.transport(IPC))) {
            AllReduceExactnessTest.checkFloatSum(tree, 31, 262_144, TestDefaults.ELEMENTS_PER_PACKET);
            AllReduceExactnessTest.checkIntSum(tree, 32, 100_001);
            assertThat(tree.contexts).allSatisfy(c -> assertThat(c.statistics().transport()).isEqualTo("ipc"));
            for (AggregationService leaf : tree.leaves) {
                assertThat(leaf.dataplane().counters().get("ipc_results")).isPositive();
                assertThat(leaf.dataplane().counters().get("partials_forwarded")).isPositive();
            }
        }
    }

    @Test
    void autoUsesUdpWhereTheSwitchHasNoSharedMemoryPortAndIpcSaysWhyItCannot() {
        try (AggregationService service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0)
                .ipcBase(null), "127.0.0.1", 0)) {
            try (LocalCluster auto = LocalCluster.onSwitch(service, "auto", 2, b -> b.transport(SwitchMLConfig.Transport.AUTO))) {
                AllReduceExactnessTest.checkFloatSum(auto, 1, 5000, TestDefaults.ELEMENTS_PER_PACKET);
                assertThat(auto.contexts.get(0).statistics().transport()).isEqualTo("udp");
            }
            SwitchMLConfig config = SwitchMLConfig.builder().controller("127.0.0.1:" + service.controllerPort())
                    .job("needs-ipc").rank(0).workers(1).transport(IPC).build();
            assertThatThrownBy(() -> SwitchMLContext.connect(config)).isInstanceOf(SwitchMLException.class)
                    .hasMessageContaining("transport=ipc, but the switch offers no shared-memory port")
                    .hasMessageContaining("--no-ipc");
            assertThat(service.dataplane().slotPool().jobs()).as("the refused rank left its job").isZero();
        }
    }

    @Test
    void autoTakesSharedMemoryOnTheSwitchsHost() {
        try (LocalCluster cluster = new LocalCluster(2, 1, b -> b.transport(SwitchMLConfig.Transport.AUTO))) {
            AllReduceExactnessTest.checkFloatSum(cluster, 3, 10_000, TestDefaults.ELEMENTS_PER_PACKET);
            assertThat(cluster.contexts.get(1).statistics().transport()).isEqualTo("ipc");
        }
    }

    @Test
    void aWorkerThatDiesFailsTheOthersWithTheUsualError() throws Exception {
        try (LocalCluster cluster = new LocalCluster(3, 1, b -> b.transport(IPC).joinTimeout(Duration.ofSeconds(60)))) {
            CompletableFuture<Void> op0 = cluster.contexts.get(0).allReduceAsync(new float[100_000], ReduceOp.SUM);
            CompletableFuture<Void> op1 = cluster.contexts.get(1).allReduceAsync(new float[100_000], ReduceOp.SUM);
            cluster.contexts.get(2).abandon();
            for (CompletableFuture<Void> op : java.util.List.of(op0, op1)) {
                assertThatThrownBy(() -> op.get(30, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                        .cause().isInstanceOf(WorkerFailedException.class).hasMessageContaining("rank 2 died");
            }
        }
    }

    @Test
    void idleReadersSleepAndTheSwitchRemovesItsFilesWhenItCloses() throws Exception {
        Path directory;
        try (LocalCluster cluster = new LocalCluster(2, 1, b -> b.transport(IPC))) {
            AllReduceExactnessTest.checkIntSum(cluster, 9, 1000);
            AggregationSwitch dataplane = cluster.service.dataplane();
            AggregationSwitch.IpcOffer offer = dataplane.ipcOffer(cluster.contexts.get(0).jobNumber()).orElseThrow();
            directory = Paths.get(offer.directory());
            // The names of the job's ring and board are gone once both workers mapped them (round 5): the switch's own
            // mappings.
            RequestRing ring = dataplane.ipcRing(cluster.contexts.get(0).jobNumber(), 0).orElseThrow();
            ResultBoard board = dataplane.ipcBoard(cluster.contexts.get(0).jobNumber()).orElseThrow();
            waitUntil(() -> ring.readerSleeping().asleep(), "the switch port's reader to sleep");
            waitUntil(() -> board.readerSleeping(0, 0).asleep() && board.readerSleeping(1, 0).asleep(),
                    "both workers' readers to sleep");
            // A sleeping job still works: the wake-ups get it going.
            AllReduceExactnessTest.checkIntSum(cluster, 10, 70_000);
            assertThat(dataplane.counters().get("ipc_wake_ups")).isPositive();
        }
        assertThat(Files.exists(directory)).as("the switch removed " + directory).isFalse();
    }

    /**
     * Fault injection acts on datagrams: with it, {@code auto} takes UDP on the switch's host (results still exact,
     * the faults injected), and {@code ipc} is refused, saying why.
     */
    @Test
    void faultInjectionTakesUdpAndIsRefusedOnTheSharedMemoryPort() {
        FaultInjection drops = new FaultInjection(0.05, 0, 0, 0, 3);
        try (LocalCluster cluster = new LocalCluster(2, 1, b -> b.transport(SwitchMLConfig.Transport.AUTO).faultInjection(drops))) {
            AllReduceExactnessTest.checkFloatSum(cluster, 12, 50_000, TestDefaults.ELEMENTS_PER_PACKET);
            for (SwitchMLContext context : cluster.contexts) {
                assertThat(context.statistics().transport()).isEqualTo("udp");
            }
            assertThat(cluster.contexts.get(0).statistics().snapshot().retransmissions()).as("drops were injected").isPositive();
        }
        assertThatThrownBy(() -> new LocalCluster(1, 1, b -> b.transport(IPC).faultInjection(drops)).close())
                .hasStackTraceContaining("transport=ipc with fault injection")
                .hasStackTraceContaining("the faults act on datagrams");
    }

    /**
     * Security round 5, item 3: the job's board and request rings are unlinked once every rank has mapped them (each
     * rank's first transport report comes after its choice), so a process of the workers' and the switch's own user that looks for them
     * to shrink them (round 4's attack, which could drop or half-process another job's packet on the switch
     * and stop a worker's event loop) finds nothing to open; the job goes on exact. Round 4's tests truncated the
     * board and the port's ring by their names; those names no longer exist while the job runs, so the attack is deterministic now. The
     * SIGBUS guards of round 4 stay, as a second line.
     */
    @Test
    void theBoardAndRingsAreUnlinkedOnceEveryRankMappedThemSoNothingIsLeftToShrink() throws Exception {
        try (LocalCluster cluster = new LocalCluster(2, 1, b -> b.transport(IPC).operationTimeout(Duration.ofMinutes(5)))) {
            AggregationSwitch dataplane = cluster.service.dataplane();
            int job = cluster.contexts.get(0).jobNumber();
            AggregationSwitch.IpcOffer offer = dataplane.ipcOffer(job).orElseThrow();
            Path directory = Paths.get(offer.directory());
            Path board = directory.resolve(offer.board());
            waitUntil(() -> !Files.exists(board), "the board's name to go once both ranks reported their transport");
            // The attack: every file of the port's directory that could be a board or a job's request ring, truncated.
            List<Path> files;
            try (java.util.stream.Stream<Path> listed = Files.list(directory)) {
                files = listed.toList();
            }
            assertThat(files).as("boards and rings left to truncate in " + directory).isEmpty();
            assertThatThrownBy(() -> FileChannel.open(board, StandardOpenOption.WRITE).close())
                    .isInstanceOf(java.nio.file.NoSuchFileException.class);
            Path ring = directory.resolve(RequestRing.fileName(offer.board(), 0));
            assertThatThrownBy(() -> FileChannel.open(ring, StandardOpenOption.WRITE).close())
                    .isInstanceOf(java.nio.file.NoSuchFileException.class);
            for (int i = 0; i < 5; i++) {
                AllReduceExactnessTest.checkIntSum(cluster, 13 + i, 20_000);
            }
            for (SwitchMLContext context : cluster.contexts) {
                assertThat(context.statistics().transport()).isEqualTo("ipc");
            }
            assertThat(dataplane.counters().get("ipc_board_faults")).isZero();
            assertThat(dataplane.counters().get("ipc_results")).as("results written to the board").isPositive();
        }
    }

    private static void waitUntil(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting for " + what);
            }
            Thread.sleep(2);
        }
    }
}
