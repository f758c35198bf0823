package io.switchml.cli;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.switchml.api.ReduceOp;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;
import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code switchml ctl} against a running switch: two in-process workers form a job and all-reduce
 * once, and stay joined while the ctl subcommands inspect the switch.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CtlCommandTest {
    private static final String JOB = "ctl-test";
    private static final int WORKERS = 2;

    private AggregationService service;
    private final List<SwitchMLContext> workers = new ArrayList<>();
    private String controller;

    @BeforeAll
    void formAJobAndAllReduceOnce() {
        service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0).allowFaultInjection(true),
                "127.0.0.1", 0);
        controller = "127.0.0.1:" + service.controllerPort();
        List<CompletableFuture<SwitchMLContext>> joining = IntStream.range(0, WORKERS)
                .mapToObj(rank -> CompletableFuture.supplyAsync(() -> SwitchMLContext.connect(SwitchMLConfig.builder()
                        .controller(controller).job(JOB).rank(rank).workers(WORKERS).elementsPerPacket(64).slotsPerThread(8)
                        .congestionControl(SwitchMLConfig.CongestionControl.ON)
                        .transport(SwitchMLConfig.Transport.UDP) // congestion control is for a network path
                        .joinTimeout(Duration.ofSeconds(60)).build())))
                .toList();
        joining.forEach(f -> workers.add(f.join()));
        List<CompletableFuture<float[]>> reduced = workers.stream().map(ctx -> CompletableFuture.supplyAsync(() -> {
            float[] data = new float[10_000];
            java.util.Arrays.fill(data, ctx.rank() + 1);
            ctx.allReduce(data, ReduceOp.SUM);
            return data;
        })).toList();
        reduced.forEach(f -> assertThat(f.join()[9_999]).isEqualTo(3f));
    }

    @AfterAll
    void stop() {
        workers.forEach(SwitchMLContext::close);
        if (service != null) {
            service.close();
        }
    }

    @Test
    void jobsListsTheJobWithItsWorkers() {
        JsonArray jobs = json(ctl("jobs")).getAsJsonArray("jobs");
        assertThat(jobs).hasSize(1);
        JsonObject job = jobs.get(0).getAsJsonObject();
        assertThat(job.get("name").getAsString()).isEqualTo(JOB);
        assertThat(job.get("job_number").getAsInt()).isEqualTo(workers.get(0).jobNumber());
        assertThat(job.get("installed").getAsBoolean()).isTrue();
        assertThat(job.get("workers_joined").getAsInt()).isEqualTo(2);
        assertThat(job.get("workers_expected").getAsInt()).isEqualTo(2);
        assertThat(job.get("slots_per_thread").getAsInt()).isEqualTo(8);
        assertThat(job.get("element_type").getAsString()).isEqualTo("int32");
        assertThat(job.get("elements_per_packet").getAsInt()).isEqualTo(64);
        assertThat(job.get("packet_bytes").getAsInt()).isEqualTo(8 + 2 + 64 * 4);
        JsonArray endpoints = job.getAsJsonArray("workers");
        assertThat(endpoints).hasSize(2);
        for (int rank = 0; rank < 2; rank++) {
            JsonObject worker = endpoints.get(rank).getAsJsonObject();
            assertThat(worker.get("rank").getAsInt()).isEqualTo(rank);
            assertThat(worker.get("address").getAsString()).isEqualTo("127.0.0.1");
            assertThat(worker.getAsJsonArray("ports")).hasSize(1);
        }

        Run table = run("ctl", "--controller", controller, "jobs");
        assertThat(table.out()).contains("JOB", JOB, "2/2", "int32", "266 B (64 elements)", "rank 0", "rank 1", "tenant uid ");
    }

    @Test
    void jobShowsTheJobAndItsSlotBitmaps() {
        int number = workers.get(0).jobNumber();
        JsonObject byName = json(ctl("job", JOB));
        JsonObject byNumber = json(ctl("job", Integer.toString(number)));
        // The transport reports age between the two calls (and may be renewed): the rest is the same.
        byName.remove("transport");
        byNumber.remove("transport");
        assertThat(byNumber).isEqualTo(byName);
        assertThat(byName.getAsJsonObject("job").get("name").getAsString()).isEqualTo(JOB);
        assertThat(byName.get("on_switch").getAsBoolean()).isTrue();
        JsonObject bitmaps = byName.getAsJsonObject("slot_bitmaps");
        assertThat(bitmaps.get("note").getAsString()).contains("without synchronizing");
        assertThat(bitmaps.get("slots").getAsInt()).isEqualTo(8);
        // The all-reduce is over: every round complete, nobody missing.
        assertThat(bitmaps.get("slot_copies_in_progress").getAsInt()).isZero();
        assertThat(bitmaps.getAsJsonArray("missing_ranks")).isEmpty();

        Run table = run("ctl", "--controller", controller, "job", JOB);
        assertThat(table.out()).contains("slot bitmaps (read from the switch's registers without synchronizing",
                "0 of 16 slot copies");
    }

    @Test
    void jobShowsEachRanksTransportAsItLastReportedIt() throws InterruptedException {
        // Reports come about once a second; wait (at most 10 s) for the ones sent after the all-reduce.
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        JsonArray transport;
        while (true) {
            transport = json(ctl("job", JOB)).getAsJsonArray("transport");
            boolean reported = transport.size() == WORKERS;
            for (int i = 0; reported && i < transport.size(); i++) {
                reported = transport.get(i).getAsJsonObject().get("packets_sent").getAsLong() > 0;
            }
            if (reported) {
                break;
            }
            assertThat(System.nanoTime() - deadline).as("waiting for both ranks' transport reports after the"
                    + " all-reduce; last seen: %s", transport).isNegative();
            Thread.sleep(100);
        }
        for (int rank = 0; rank < WORKERS; rank++) {
            JsonObject t = transport.get(rank).getAsJsonObject();
            assertThat(t.get("rank").getAsInt()).isEqualTo(rank);
            assertThat(t.get("transport").getAsString()).isEqualTo("udp");
            assertThat(t.get("congestion_control").getAsBoolean()).isTrue();
            assertThat(t.get("congestion_window").getAsDouble()).isBetween(1.0, 8.0);
            assertThat(t.get("base_rtt_us").getAsLong()).isPositive();
            assertThat(t.get("reported_ms_ago").getAsLong()).isNotNegative();
        }
        Run table = run("ctl", "--controller", controller, "job", JOB);
        assertThat(table.out()).contains("transport (each rank's last report):", "VIA", "WINDOW", "BASE_RTT", "RETRANS");
    }

    @Test
    void anUnknownJobIsAClearError() {
        Run run = run("ctl", "--controller", controller, "job", "no-such-job");
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err()).contains("switchml ctl job: no job named 'no-such-job' on this switch");
    }

    @Test
    void statsShowsTheSwitchCounters() {
        JsonObject stats = json(ctl("stats"));
        JsonObject counters = stats.getAsJsonObject("counters");
        Map<String, Long> expected = service.dataplane().counters();
        assertThat(counters.get("packets_received").getAsLong()).isPositive()
                .isEqualTo(expected.get("packets_received"));
        assertThat(counters.get("contributions").getAsLong()).isPositive();
        assertThat(counters.get("results_sent").getAsLong()).isPositive().isEqualTo(expected.get("results_sent"));
        assertThat(counters.has("retransmissions_answered")).isTrue();
        JsonObject drops = stats.getAsJsonObject("drops_by_reason");
        assertThat(drops.get("unknown_source").getAsLong()).isEqualTo(expected.get("drops_unknown_source"));
        assertThat(drops.size() + counters.size()).isEqualTo(expected.size());
        assertThat(stats.get("jobs_installed").getAsInt()).isEqualTo(1);

        assertThat(run("ctl", "--controller", controller, "stats").out())
                .contains("packets_received", "drops by reason:", "stale_round", "drop simulator: ingress");
    }

    @Test
    void dropSetsTheSwitchsDropSimulatorAndRefusesOneAndAHalf() {
        JsonObject set = json(ctl("drop", "--ingress", "0.01", "--egress", "0.02"));
        assertThat(set.get("ingress").getAsDouble()).isEqualTo(0.01);
        assertThat(set.get("egress").getAsDouble()).isEqualTo(0.02);
        assertThat(service.dataplane().ingressDropProbability()).isEqualTo(0.01);
        assertThat(service.dataplane().egressDropProbability()).isEqualTo(0.02);

        Run refused = run("ctl", "--controller", controller, "drop", "--ingress", "1.5");
        assertThat(refused.exitCode()).isEqualTo(1);
        assertThat(refused.err()).contains("switchml ctl drop: ingress drop probability 1.5 is outside [0, 1)");
        assertThat(service.dataplane().ingressDropProbability()).isEqualTo(0.01);

        json(ctl("drop", "--ingress", "0", "--egress", "0"));
        assertThat(service.dataplane().ingressDropProbability()).isZero();
    }

    @Test
    void aControllerThatIsNotThereFailsFastWithAClearMessage() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        Run run = run("ctl", "--controller", "127.0.0.1:" + closedPort, "stats");
        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.err()).contains("switchml ctl stats: cannot read the switch's statistics: cannot reach the controller at 127.0.0.1:"
                + closedPort, "is `switchml switch` running there");
    }

    /** Runs a ctl subcommand against the test's switch with --format json; it must succeed. */
    private String ctl(String... args) {
        List<String> all = new ArrayList<>(List.of("ctl", "--controller", controller, "--format", "json"));
        all.addAll(List.of(args));
        Run run = run(all.toArray(String[]::new));
        assertThat(run.exitCode()).as("exit code; stderr: %s", run.err()).isZero();
        return run.out();
    }

    private static JsonObject json(String out) {
        assertThat(out.strip().lines()).as("one JSON object").hasSize(1);
        return JsonParser.parseString(out).getAsJsonObject();
    }

    private static Run run(String... args) {
        return Run.of(args);
    }
}
