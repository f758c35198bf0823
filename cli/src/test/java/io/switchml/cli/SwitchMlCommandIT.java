package io.switchml.cli;

import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import javax.imageio.ImageIO;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The command line as users type it. */
class SwitchMlCommandIT {
    private String run(String... args) {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            assertThat(SwitchMlCommand.commandLine().execute(args)).as("exit code").isZero();
        } finally {
            System.setOut(saved);
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void benchPrintsOneVerifiedJsonObjectPerSize() {
        String out = run("bench", "--workers", "2", "--size", "4KiB,64KiB", "--iters", "2", "--warmup", "0", "--verify",
                "--format", "json");
        String[] lines = out.strip().split("\n");
        assertThat(lines).hasSize(2);
        assertThat(lines[0]).startsWith("{").contains("\"algo\": \"switchml\"", "\"workers\": 2", "\"bytes\": 4096",
                "\"median_ms\":", "\"min_ms\":", "\"max_ms\":", "\"algbw_gbps\":", "\"busbw_gbps\":", "\"ate_per_s\":",
                "\"retransmissions\":", "\"verified\": true");
        assertThat(lines[1]).contains("\"bytes\": 65536", "\"verified\": true");
    }

    @Test
    void benchMeasuresEveryAlgorithmWithTheSameTensors() {
        String out = run("bench", "--algo", "switchml,ring,ps", "--workers", "2", "--size", "4KiB,1028B", "--iters", "2",
                "--warmup", "0", "--verify", "--format", "json");
        String[] lines = out.strip().split("\n");
        assertThat(lines).hasSize(6).allSatisfy(l -> assertThat(l).startsWith("{").contains("\"workers\": 2",
                "\"verified\": true"));
        for (int i = 0; i < 6; i++) {
            String algo = new String[]{"switchml", "ring", "ps"}[i / 2];
            assertThat(lines[i]).contains("\"algo\": \"" + algo + "\"", "\"bytes\": " + (i % 2 == 0 ? 4096 : 1028));
        }
        assertThat(lines[2]).contains("\"retransmissions\": 0");
        assertThat(lines[4]).contains("\"retransmissions\": 0");
    }

    @Test
    void benchWritesCsvAndAPlot(@TempDir Path dir) throws IOException {
        Path png = dir.resolve("p.png");
        String out = run("bench", "--workers", "2", "--size", "64KiB", "--iters", "1", "--warmup", "0", "--format", "csv",
                "--plot", png.toString());
        List<String> lines = out.lines().toList();
        assertThat(lines).as("a header and one row; progress goes to standard error").hasSize(2);
        assertThat(lines.get(0)).isEqualTo("algo,workers,bytes,type,iterations,median_ms,min_ms,max_ms,algbw_gbps,"
                + "busbw_gbps,goodput_gbps,ate_per_s,retransmissions,verified,rate_bps,line_rate_fraction,wire_bytes,wire_ratio,topology,kernels,worker_syscalls,switch_syscalls,"
                + "cpu_s,datagrams_out,packets_per_datagram_out,datagrams_in,packets_per_datagram_in");
        assertThat(lines.get(1)).startsWith("switchml,2,65536,float32,1,").contains(",,,"); // not verified, no rate
        BufferedImage image = ImageIO.read(png.toFile());
        assertThat(image.getWidth()).isPositive();
        assertThat(image.getHeight()).isPositive();
    }

    @Test
    void benchAgainstARunningSwitchPrintsATable() {
        try (AggregationService service = AggregationService.start(
                new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0)) {
            String out = run("bench", "--controller", "127.0.0.1:" + service.controllerPort(), "--workers", "2",
                    "--size", "1KiB:4KiB", "--iters", "1", "--warmup", "0", "--verify", "--type", "int32",
                    "--elements-per-packet", "64");
            assertThat(out).contains("algo", "median_ms", "busbw_Gbps");
            assertThat(out.lines().filter(l -> l.startsWith("switchml")).toList()).hasSize(3)
                    // verified; no rack topology; no system calls counted; the machine's CPU time; no datagrams (the
                    // workers reach the switch through its shared-memory port)
                    .allSatisfy(l -> assertThat(l).contains("int32", " yes        -               - ")
                            .matches(".* [0-9]+\\.[0-9]{2} +-$"));
            assertThat(service.dataplane().counters().get("contributions")).isPositive();
        }
    }

    @Test
    void badOptionsGetAClearErrorAndAnExitCode() {
        CommandLine cl = SwitchMlCommand.commandLine();
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err));
        assertThat(cl.execute("bench", "--size", "3B")).isNotZero();
        assertThat(err.toString()).contains("not a positive multiple of 4 bytes");
        assertThat(cl.execute("bench", "--format", "xml")).isNotZero();
        assertThat(err.toString()).contains("--format: unknown format 'xml'; known: table, json, csv");
        assertThat(cl.execute("bench", "--plot", "/no/such/dir/p.png")).isNotZero();
        assertThat(err.toString()).contains("cannot write the plot to /no/such/dir/p.png: the directory /no/such/dir does"
                + " not exist");
        assertThat(cl.execute("bench", "--algo", "switchml,allgather")).isNotZero();
        assertThat(err.toString()).contains("--algo: unknown all-reduce algorithm 'allgather'; known: switchml, ring, ps, topk, qsgd");
    }

    @Test
    void algorithmsListsTheRegistryThatBenchAndTrainRead() {
        String text = run("algorithms");
        assertThat(text.lines()).extracting(l -> l.split(" +")[0]).containsExactly("switchml", "ring", "ps", "topk", "qsgd");
        assertThat(text).contains("needs a switch", "Gloo's ring");
        String json = run("algorithms", "--format", "json");
        assertThat(json.lines()).hasSize(5).first().asString()
                .startsWith("{\"id\":\"switchml\",\"needsSwitch\":true,\"compressed\":false,");
        assertThat(json).contains("\"implementation\":\"io.switchml.launch.TopKAlgorithm\"");
    }

    @Test
    void trainAloneEndsWithOneJsonObject() {
        String out = run("train", "--aggregation", "none", "--workers", "1", "--epochs", "1", "--limit", "512",
                "--batch-size", "32", "--format", "json");
        assertThat(out.strip().lines().toList()).hasSize(1);
        assertThat(out.strip()).startsWith("{").contains("\"aggregation\": \"none\"", "\"workers\": 1", "\"epochs\": 1",
                "\"test_accuracy\": 0.", "\"images_per_s\":", "\"aggregation_fraction\": 0", "\"parameters_identical\": true");
    }

    @Test
    void trainRefusesInconsistentOptions() {
        CommandLine cl = SwitchMlCommand.commandLine();
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err));
        assertThat(cl.execute("train", "--aggregation", "none", "--workers", "2", "--limit", "64")).isNotZero();
        assertThat(err.toString()).contains("--aggregation none trains one process alone; use --workers 1");
        assertThat(cl.execute("train", "--aggregation", "allgather")).isNotZero();
        assertThat(err.toString()).contains("unknown aggregation 'allgather'");
        assertThat(cl.execute("train", "--rank", "0", "--workers", "2")).isNotZero();
        assertThat(err.toString()).contains("--rank needs --controller");
        assertThat(cl.execute("train", "--data", "/no/such/dir", "--aggregation", "none", "--workers", "1")).isNotZero();
        assertThat(err.toString()).contains("apt-get install dataset-fashion-mnist");
        assertThat(cl.execute("train", "--rate", "1gbit")).isNotZero();
        assertThat(err.toString()).contains("--rate needs --rack");
        assertThat(cl.execute("train", "--rack")).isNotZero();
        assertThat(err.toString()).contains("--rack needs --rate, e.g. --rate 100mbit");
        assertThat(cl.execute("train", "--target-accuracy", "1.5")).isNotZero();
        assertThat(err.toString()).contains("--target-accuracy must be in (0, 1], not 1.5");
        assertThat(cl.execute("train", "--aggregation", "ring,topk", "--rank", "0", "--controller", "127.0.0.1:1")).isNotZero();
        assertThat(err.toString()).contains("--rank runs one rank of one job: give one --aggregation");
        assertThat(cl.execute("train", "--aggregation", "topk", "--topk-ratio", "0", "--limit", "64")).isNotZero();
        assertThat(err.toString()).contains("top-k ratio 0.0 must be in (0, 1]");
        assertThat(cl.execute("train", "--aggregation", "ring", "--momentum", "0.5", "--limit", "64")).isNotZero();
        assertThat(err.toString()).contains("--momentum is for sgd; aggregation ring trains with adam here (give --optimizer sgd)");
        assertThat(cl.execute("train", "--optimizer", "rmsprop", "--limit", "64")).isNotZero();
        assertThat(err.toString()).contains("unknown optimizer 'rmsprop'; known: adam, sgd");
        assertThat(cl.execute("train", "--lr-schedule", "step", "--limit", "64")).isNotZero();
        assertThat(err.toString()).contains("unknown learning-rate schedule 'step'; known: fixed, cosine");
        assertThat(cl.execute("train", "--lr", "0", "--limit", "64")).isNotZero();
        assertThat(err.toString()).contains("--lr must be positive, not 0.0");
        assertThat(cl.execute("train", "--framework", "jax", "--limit", "64")).isNotZero();
        assertThat(err.toString()).contains("unknown framework 'jax'; known: djl, tensorflow");
        assertThat(cl.execute("train", "--framework", "tensorflow", "--optimizer", "sgd", "--limit", "64")).isNotZero();
        assertThat(err.toString()).contains("--framework tensorflow trains at a fixed learning rate");
    }

    @Test
    void trainWithTensorflowEndsWithOneJsonObjectAndIdenticalVariables() {
        // The ring here; TrainRunnerIT trains TensorFlow through the switch.
        String out = run("train", "--framework", "tensorflow", "--aggregation", "ring", "--workers", "2", "--epochs", "1",
                "--limit", "512", "--batch-size", "32", "--format", "json");
        assertThat(out.strip().lines().toList()).hasSize(1);
        assertThat(out.strip()).startsWith("{").contains("\"aggregation\": \"ring\"", "\"workers\": 2",
                "\"test_accuracy\": 0.", "\"parameters_identical\": true");
    }

    @Test
    void benchComparesTheCompressionBaselinesAndReportsTheirBytes() {
        String out = run("bench", "--algo", "topk,qsgd", "--workers", "2", "--size", "64KiB", "--iters", "2", "--warmup", "1",
                "--verify", "--format", "json", "--topk-ratio", "0.05", "--qsgd-levels", "127");
        String[] lines = out.strip().split("\n");
        assertThat(lines).hasSize(2);
        assertThat(lines[0]).contains("\"algo\": \"topk\"", "\"verified\": true", "\"wire_bytes\": 6588,",
                "\"wire_ratio\": 0.1005"); // one message of 16 + 8 x 819 bytes, behind a 20-byte header
        assertThat(lines[1]).contains("\"algo\": \"qsgd\"", "\"verified\": true", "\"wire_ratio\": 0.25");
        String corrected = run("bench", "--algo", "topk", "--workers", "3", "--size", "64KiB", "--iters", "3", "--warmup", "1",
                "--verify", "--format", "json", "--topk-ratio", "0.05", "--topk-momentum", "0.9");
        assertThat(corrected.strip()).contains("\"algo\": \"topk\"", "\"verified\": true");
    }

    @Test
    void trainComparesAggregationsOneRunEach(@TempDir Path dir) throws IOException {
        Path png = dir.resolve("train.png");
        String out = run("train", "--aggregation", "ring,qsgd", "--workers", "2", "--epochs", "1", "--limit", "512",
                "--batch-size", "32", "--target-accuracy", "0.1", "--format", "json", "--plot", png.toString());
        List<String> lines = out.strip().lines().toList();
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).contains("\"aggregation\": \"ring\"", "\"target_accuracy\": 0.1", "\"rate_bps\": null",
                "\"parameters_identical\": true").doesNotContain("\"seconds_to_target\": null");
        assertThat(lines.get(1)).contains("\"aggregation\": \"qsgd\"", "\"parameters_identical\": true");
        assertThat(ImageIO.read(png.toFile()).getWidth()).isPositive();
    }

    @Test
    void torchCommandsRefuseUnknownHooksAlgorithmsAndModels() {
        CommandLine cl = SwitchMlCommand.commandLine();
        StringWriter err = new StringWriter();
        cl.setErr(new PrintWriter(err));
        assertThat(cl.execute("torch-train", "--hook", "allgather")).isNotZero();
        assertThat(err.toString()).contains("--hook must be switchml, ring, ps or none, not allgather");
        assertThat(cl.execute("torch-train", "--backend", "nccl")).isNotZero();
        assertThat(err.toString()).contains("--backend must be gloo, switchml or both (switchml,gloo), not nccl");
        assertThat(cl.execute("torch-train", "--backend", "switchml", "--hook", "ring")).isNotZero();
        assertThat(err.toString()).contains("would start a second agent beside the backend's");
        assertThat(cl.execute("torch-train", "--rate", "1gbit")).isNotZero();
        assertThat(err.toString()).contains("--rate needs --rack");
        assertThat(cl.execute("torchrun", "--rack", "train.py")).isNotZero();
        assertThat(err.toString()).contains("--rack needs --rate, e.g. --rate 1gbit");
        assertThat(cl.execute("torchrun", "--rack", "--rate", "1gbit", "--controller", "h:1", "train.py")).isNotZero();
        assertThat(err.toString()).contains("--rack starts its own switch on the rack's fabric; drop --controller");
        assertThat(cl.execute("torch-train", "--format", "xml")).isNotZero();
        assertThat(err.toString()).contains("--format must be table or json, not xml");
        assertThat(cl.execute("torchrun", "--algo", "allgather", "train.py")).isNotZero();
        assertThat(err.toString()).contains("--algo must be one of switchml, ring, ps, topk, qsgd, or none; not allgather");
        assertThat(cl.execute("torchrun", "--workers", "0", "train.py")).isNotZero();
        assertThat(err.toString()).contains("--workers must be at least 1");
        assertThat(cl.execute("torch-train", "--model", "alexnet,resnet18")).isNotZero();
        assertThat(err.toString()).contains("unknown model alexnet (--model); known: resnet18, resnet50, vgg11, vgg16,"
                + " mobilenet_v2, bert_base, dlrm");
        assertThat(cl.execute("torch-train", "--steps", "5")).isNotZero();
        assertThat(err.toString()).contains("--steps needs --model (the MLP trains for --epochs)");
        assertThat(cl.execute("torch-train", "--model", "resnet18", "--epochs", "2")).isNotZero();
        assertThat(err.toString()).contains("--epochs is the Fashion-MNIST MLP's; with --model, use --steps");
        assertThat(cl.execute("torch-train", "--model", "resnet18", "--steps", "1")).isNotZero();
        assertThat(err.toString()).contains("--steps must be at least 2 (the first is not timed), not 1");
    }
}
