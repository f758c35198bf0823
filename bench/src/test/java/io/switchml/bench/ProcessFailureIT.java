package io.switchml.bench;

import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchUnavailableException;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Failures of real processes, killed with SIGKILL mid-job: the survivors fail within a bound far
 * below the operation timeout, with the documented error, and a restarted switch runs the next job.
 */
class ProcessFailureIT {
    /** The operation timeout of every worker: far beyond the bounds below, so it never fires. */
    private static final long OPERATION_TIMEOUT_MS = 120_000;
    /** How fast the survivors must fail once a process is killed. */
    private static final long FAILURE_BOUND_MS = 15_000;
    /**
     * How fast they must fail once a process is frozen (SIGSTOP: its connections stay open): the
     * controller's keepalive (5 s + 5 s) or the worker's (10 s + 5 s), plus slack for a loaded host.
     */
    private static final long FROZEN_BOUND_MS = 30_000;
    private static final Pattern SWITCH_READY = Pattern.compile("switch ready controller=(\\d+) dataplane=(\\d+)");

    @Test
    @Timeout(120)
    void aKilledWorkerProcessMakesTheOthersFailWithTheRankNamedAndTheSwitchFreesTheJob() throws Exception {
        workerDies(false, FAILURE_BOUND_MS, "the connection of rank 1 to the controller ended before the rank left the job");
    }

    @Test
    @Timeout(120)
    void aFrozenWorkerProcessIsDeclaredDeadByTheControllersKeepalive() throws Exception {
        workerDies(true, FROZEN_BOUND_MS, "the connection of rank 1 to the controller ended before the rank left the job");
    }

    private void workerDies(boolean freeze, long boundMs, String reason) throws Exception {
        try (AggregationService service = AggregationService.start(
                new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0)) {
            String controller = "127.0.0.1:" + service.controllerPort();
            List<ChildJvm> workers = new ArrayList<>();
            try {
                for (int rank = 0; rank < 3; rank++) {
                    workers.add(new ChildJvm("worker " + rank, LoopingWorker.class, controller, "doomed", String.valueOf(rank),
                            "3", String.valueOf(OPERATION_TIMEOUT_MS), "65536"));
                }
                String joined = workers.get(0).awaitLine(l -> l.startsWith("joined job-number "), 60_000);
                assertThat(joined).as("worker 0 joined").isNotNull();
                int number = Integer.parseInt(joined.substring("joined job-number ".length()));
                for (ChildJvm w : workers) {
                    assertThat(w.awaitLine("running"::equals, 60_000)).as("all-reduces running").isNotNull();
                }
                assertThat(service.dataplane().job(number)).isPresent();

                long killedAt = System.nanoTime();
                if (freeze) {
                    workers.get(1).freeze();
                } else {
                    workers.get(1).kill();
                }

                for (int rank : new int[]{0, 2}) {
                    ChildJvm w = workers.get(rank);
                    long left = boundMs - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
                    assertThat(w.exitCode(Math.max(1, left))).as("worker %d exits within %d ms", rank, boundMs)
                            .isEqualTo(3);
                    String failed = w.awaitLine(l -> l.startsWith("FAILED "), 1_000);
                    assertThat(failed).as("worker %d's last word", rank)
                            .startsWith("FAILED io.switchml.api.WorkerFailedException: job 'doomed' (job number " + number
                                    + ") was aborted because rank 1 died while this worker (rank " + rank + ")")
                            .contains(reason)
                            .contains("The switch freed the job's slots")
                            .contains("restart the job");
                }
                System.err.printf("workers failed %d ms after rank 1 was %s%n",
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt), freeze ? "frozen" : "killed");
                assertThat(service.dataplane().job(number)).as("the switch freed the job").isEmpty();
            } finally {
                for (ChildJvm w : workers) {
                    w.close();
                }
            }
        }
    }

    @Test
    @Timeout(120)
    void aKilledSwitchProcessFailsTheWorkersAndARestartedSwitchRunsTheNextJob() throws Exception {
        switchDies(false, FAILURE_BOUND_MS);
    }

    @Test
    @Timeout(120)
    void aFrozenSwitchProcessIsNoticedByTheWorkersKeepalive() throws Exception {
        switchDies(true, FROZEN_BOUND_MS);
    }

    private void switchDies(boolean freeze, long boundMs) throws Exception {
        int controllerPort;
        int dataplanePort;
        List<SwitchMLContext> contexts = new ArrayList<>();
        ExecutorService pool = Executors.newCachedThreadPool();
        try {
            try (ChildJvm first = new ChildJvm("switch", SwitchMain.class, "0", "0")) {
                Matcher ready = ready(first);
                controllerPort = Integer.parseInt(ready.group(1));
                dataplanePort = Integer.parseInt(ready.group(2));
                contexts.addAll(connect(pool, controllerPort, "survivor"));

                // Both workers all-reduce in a loop until it fails.
                CountDownLatch running = new CountDownLatch(2);
                List<CompletableFuture<Throwable>> loops = new ArrayList<>();
                for (SwitchMLContext c : contexts) {
                    loops.add(CompletableFuture.supplyAsync(() -> {
                        int[] x = new int[65536];
                        try {
                            for (int i = 0; ; i++) {
                                c.allReduce(x, ReduceOp.SUM);
                                if (i == 0) {
                                    running.countDown();
                                }
                            }
                        } catch (RuntimeException e) {
                            return e;
                        }
                    }, pool));
                }
                assertThat(running.await(60, TimeUnit.SECONDS)).as("all-reduces running").isTrue();

                long killedAt = System.nanoTime();
                if (freeze) {
                    first.freeze();
                } else {
                    first.kill();
                }
                for (int rank = 0; rank < 2; rank++) {
                    long left = boundMs - TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
                    Throwable e = loops.get(rank).get(Math.max(1, left), TimeUnit.MILLISECONDS);
                    assertThat(e).as("rank %d", rank).isInstanceOf(SwitchUnavailableException.class)
                            .hasMessageStartingWith("job 'survivor' (job number " + contexts.get(rank).jobNumber() + "), rank "
                                    + rank + ": lost the connection to the switch's controller at 127.0.0.1:" + controllerPort)
                            .hasMessageContaining("once the switch is back, join again");
                }
                System.err.printf("workers failed %d ms after the switch was %s%n",
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt), freeze ? "frozen" : "killed");
            }

            // A new switch on the same ports; the old contexts are still open. A fresh job (same name) is exact.
            try (ChildJvm second = new ChildJvm("restarted switch", SwitchMain.class, String.valueOf(controllerPort),
                    String.valueOf(dataplanePort))) {
                Matcher ready = ready(second);
                assertThat(Integer.parseInt(ready.group(1))).isEqualTo(controllerPort);
                List<SwitchMLContext> fresh = connect(pool, controllerPort, "survivor");
                try {
                    List<CompletableFuture<int[]>> sums = new ArrayList<>();
                    for (SwitchMLContext c : fresh) {
                        sums.add(CompletableFuture.supplyAsync(() -> {
                            int[] x = new int[100_000];
                            for (int i = 0; i < x.length; i++) {
                                x[i] = i * (c.rank() + 1);
                            }
                            c.allReduce(x, ReduceOp.SUM);
                            return x;
                        }, pool));
                    }
                    for (CompletableFuture<int[]> f : sums) {
                        int[] x = f.get(60, TimeUnit.SECONDS);
                        for (int i = 0; i < x.length; i++) {
                            if (x[i] != 3 * i) {
                                throw new AssertionError("element " + i + " = " + x[i] + ", expected " + 3 * i);
                            }
                        }
                    }
                    // Closing the old contexts now must not disturb the new job, which may have the same number.
                    for (SwitchMLContext c : contexts) {
                        c.close();
                    }
                    contexts.clear();
                    List<CompletableFuture<Void>> again = fresh.stream()
                            .map(c -> c.allReduceAsync(new int[]{c.rank(), 1}, ReduceOp.SUM)).toList();
                    for (CompletableFuture<Void> f : again) {
                        f.get(30, TimeUnit.SECONDS);
                    }
                } finally {
                    fresh.forEach(SwitchMLContext::close);
                }
            }
        } finally {
            contexts.forEach(SwitchMLContext::close);
            pool.shutdownNow();
        }
    }

    private static Matcher ready(ChildJvm sw) throws InterruptedException {
        String line = sw.awaitLine(l -> SWITCH_READY.matcher(l).matches(), 60_000);
        assertThat(line).as("the switch's ready line").isNotNull();
        Matcher m = SWITCH_READY.matcher(line);
        assertThat(m.matches()).isTrue();
        return m;
    }

    /** Two workers of {@code job} joined at the controller on {@code port}, in rank order. */
    private static List<SwitchMLContext> connect(ExecutorService pool, int port, String job) {
        List<CompletableFuture<SwitchMLContext>> joining = new ArrayList<>();
        for (int rank = 0; rank < 2; rank++) {
            SwitchMLConfig config = SwitchMLConfig.builder().controller("127.0.0.1:" + port).job(job).rank(rank).workers(2)
                    .operationTimeout(Duration.ofMillis(OPERATION_TIMEOUT_MS)).joinTimeout(Duration.ofSeconds(30)).build();
            joining.add(CompletableFuture.supplyAsync(() -> SwitchMLContext.connect(config), pool));
        }
        return joining.stream().map(CompletableFuture::join).toList();
    }
}
