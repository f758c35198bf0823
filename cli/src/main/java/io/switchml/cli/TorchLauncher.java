package io.switchml.cli;

import io.switchml.controller.AggregationService;
import io.switchml.controller.ControllerSecurity;
import io.switchml.dataplane.SwitchConfig;
import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.JobSecret;
import io.switchml.launch.Rack;
import io.switchml.launch.RackSwitch;
import io.switchml.launch.RunDeadline;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Starts N Python ranks of a PyTorch script on this host, as {@code torchrun} does (RANK, WORLD_SIZE,
 * MASTER_ADDR, MASTER_PORT, LOCAL_RANK), plus what {@code switchml_torch.start_agent()} reads to start
 * each rank's agent: the algorithm, the embedded switch's controller, a job name and its secret, and the Java
 * command. Rank 0's standard output is this process's; everything else goes to standard error
 * with the rank in front. When one rank fails, the others get a few seconds to fail on their own
 * (with the error they saw), then are stopped. With a rack, each rank runs in its own namespace of the emulated rack
 * (docs/ARCHITECTURE.md section 7) and the switch on its fabric, so every byte between ranks crosses shaped links.
 */
final class TorchLauncher {
    /** How long ranks get to end on their own after one failed, before they are killed. */
    private static final Duration GRACE = Duration.ofSeconds(10);
    /** How long the other ranks get, after one failed, to fail on their own with the error they saw (it died). */
    private static final Duration REPORT = Duration.ofSeconds(5);
    /** torchrun's default rendezvous port, used in a rack's rank 0 namespace. */
    private static final int RACK_MASTER_PORT = 29500;

    private final PrintStream out;
    private final PrintStream err;

    TorchLauncher(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /**
     * Runs the ranks on this host, or each in its own namespace of an emulated rack built to {@code rackSpec} when it
     * is not null.
     *
     * @return the first failing rank's exit code, or 0
     */
    int run(int workers, String algorithm, String controller, String python, List<String> scriptAndArgs, Duration timeout,
            Rack.Spec rackSpec) throws InterruptedException, IOException {
        if (workers < 1) {
            throw new IllegalArgumentException("--workers must be at least 1");
        }
        boolean needsSwitch = !algorithm.equals("none") && algorithmNamed(algorithm).needsSwitch() && controller == null;
        if (rackSpec != null) {
            try (Rack rack = Rack.create(rackSpec)) {
                err.println("emulated rack " + rack.prefix() + ": " + (rackSpec.ranksPerHost() == 1 ? rackSpec.describe()
                        : rackSpec.workers() + " ranks on " + rackSpec.hosts() + " hosts of " + rackSpec.ranksPerHost()
                        + " behind one link each (" + rackSpec.rateBps() + " bit/s, MTU " + rackSpec.mtu() + "), each host's"
                        + " ranks sharing one agent, the switch on the fabric"));
                List<Process> switches = new ArrayList<>();
                try {
                    String inRack = needsSwitch ? RackSwitch.startAll(rack, 1, err, switches).get(0) : controller;
                    return launch(workers, algorithm, inRack, python, scriptAndArgs, timeout, rack);
                } finally {
                    RackSwitch.stopAll(switches);
                }
            }
        }
        AggregationService embedded = null;
        if (needsSwitch) {
            // Its ranks present the job's secret (the one set below), so it requires one.
            embedded = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0,
                    new ControllerSecurity().requireJobSecrets(true));
            controller = "127.0.0.1:" + embedded.controllerPort();
            err.println("embedded switch: controller " + controller);
        }
        try {
            return launch(workers, algorithm, controller, python, scriptAndArgs, timeout, null);
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }

    /** A registered algorithm, or an error that lists them for {@code --algo}. */
    private static AllReduceAlgorithm algorithmNamed(String name) {
        try {
            return AllReduceAlgorithm.named(name);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--algo must be one of " + AllReduceAlgorithm.ids() + ", or none; not " + name);
        }
    }

    /** Starts the ranks (each in its rack namespace when {@code rack} is not null) and waits for them. */
    private int launch(int workers, String algorithm, String controller, String python, List<String> scriptAndArgs,
                       Duration timeout, Rack rack) throws InterruptedException, IOException {
        Path home = home();
        List<Process> ranks = new ArrayList<>();
        List<Thread> pumps = new ArrayList<>();
        try {
            String job = "torch-" + ProcessHandle.current().pid() + "-" + System.nanoTime();
            // A rack's namespaces are new: torchrun's default port is free in rank 0's.
            int masterPort = rack == null ? freePort() : RACK_MASTER_PORT;
            String agentClasspath = agentClasspath(home);
            // One secret for the job's ranks (unless the user's environment holds one): a stranger cannot take a seat.
            String secret = JobSecret.fresh();
            for (int r = 0; r < workers; r++) {
                List<String> command = new ArrayList<>(rack == null ? List.of() : Rack.inNamespace(rack.workerNamespace(r)));
                command.addAll(List.of(python, "-u"));
                command.addAll(scriptAndArgs);
                ProcessBuilder pb = new ProcessBuilder(command);
                Map<String, String> env = pb.environment();
                env.put("RANK", String.valueOf(r));
                int perHost = rack == null ? workers : rack.spec().ranksPerHost();
                env.put("LOCAL_RANK", String.valueOf(r % perHost));
                env.put("WORLD_SIZE", String.valueOf(workers));
                env.put("LOCAL_WORLD_SIZE", String.valueOf(perHost));
                env.put("MASTER_ADDR", rack == null ? "127.0.0.1" : rack.workerAddress(0));
                env.put("MASTER_PORT", String.valueOf(masterPort));
                if (rack != null) {
                    // Gloo's default address is the host name's, loopback in every namespace.
                    env.put("GLOO_SOCKET_IFNAME", Rack.HOST_INTERFACE);
                }
                env.put("SWITCHML_ALGO", algorithm);
                env.put("SWITCHML_JOB", job);
                if (!env.containsKey(JobSecret.VARIABLE) && !env.containsKey(JobSecret.FILE_VARIABLE)) {
                    env.put(JobSecret.VARIABLE, secret);
                }
                if (controller != null) {
                    env.put("SWITCHML_CONTROLLER", controller);
                }
                env.put("SWITCHML_JAVA", ProcessHandle.current().info().command().orElse("java"));
                env.put("SWITCHML_CLASSPATH", agentClasspath);
                String pythonPath = home.resolve("python").toString();
                String old = env.get("PYTHONPATH");
                env.put("PYTHONPATH", old == null || old.isEmpty() ? pythonPath : pythonPath + ":" + old);
                // One rank per core at most on a small host; each rank's PyTorch would otherwise start a thread per core.
                env.putIfAbsent("OMP_NUM_THREADS", "1");
                Process p = pb.start();
                ranks.add(p);
                pumps.add(pump(p.getInputStream(), r == 0 ? out : err, r == 0 ? "" : "[rank " + r + "] "));
                pumps.add(pump(p.getErrorStream(), err, "[rank " + r + "] "));
            }
            return await(ranks, timeout);
        } finally {
            for (Process p : ranks) {
                // Through the handles: Process.destroyForcibly would also close this side of the pipes, and
                // the rank's last lines, still in the pipe, would be lost.
                p.descendants().forEach(ProcessHandle::destroyForcibly);
                p.toHandle().destroyForcibly();
            }
            for (Thread t : pumps) {
                t.join(GRACE.toMillis());
            }
        }
    }

    private int await(List<Process> ranks, Duration timeout) throws InterruptedException {
        RunDeadline deadline = RunDeadline.after(timeout);
        while (true) {
            boolean all = true;
            for (int r = 0; r < ranks.size(); r++) {
                Process p = ranks.get(r);
                if (p.isAlive()) {
                    all = false;
                } else if (p.exitValue() != 0) {
                    err.println("switchml torchrun: rank " + r + " exited with code " + p.exitValue() + "; stopping the other ranks");
                    awaitAll(ranks, REPORT);
                    stopAll(ranks);
                    return p.exitValue();
                }
            }
            if (all) {
                return 0;
            }
            if (deadline.passed()) {
                err.println("switchml torchrun: the ranks did not finish within " + timeout + " (--timeout); stopping them");
                stopAll(ranks);
                return 1;
            }
            Thread.sleep(100);
        }
    }

    private static void stopAll(List<Process> ranks) throws InterruptedException {
        // The handle's destroy, not Process.destroy: that one also closes this side of the rank's pipes, and
        // what the rank prints while it stops (the error it saw) would be lost.
        ranks.forEach(p -> p.toHandle().destroy());
        awaitAll(ranks, GRACE);
    }

    private static void awaitAll(List<Process> ranks, Duration atMost) throws InterruptedException {
        long deadline = System.nanoTime() + atMost.toNanos();
        for (Process p : ranks) {
            p.waitFor(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
    }

    private static Thread pump(InputStream stream, PrintStream to, String prefix) {
        Thread t = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                    to.println(prefix + line);
                }
            } catch (IOException ignored) {
                // The rank's pipe closed under us when it was killed: nothing more to copy.
            }
        }, "torchrun-output");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** torch.distributed's rendezvous needs a TCP port known before the ranks start. */
    private static int freePort() {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress("127.0.0.1", 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free port for torch.distributed's rendezvous: " + e.getMessage(), e);
        }
    }

    /**
     * The class path the ranks start their agents with: the agent module's own in the source tree (a tenth of this
     * one, which has Spark and DJL), else this command's (a distribution's lib/).
     */
    private static String agentClasspath(Path home) throws IOException {
        Path own = home.resolve("agent/target/agent-classpath.txt");
        return Files.isRegularFile(own) ? Files.readString(own).strip() : System.getProperty("java.class.path");
    }

    /** The repository, for its python/ directory: -Dswitchml.home (set by ./switchml), else found from this jar's place. */
    static Path home() {
        String property = System.getProperty("switchml.home");
        if (property != null) {
            return Path.of(property);
        }
        try {
            Path where = Path.of(TorchLauncher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            for (Path p = where; p != null; p = p.getParent()) {
                if (Files.isDirectory(p.resolve("python/switchml_torch"))) {
                    return p;
                }
            }
        } catch (URISyntaxException | SecurityException ignored) {
            // Fall through to the message below.
        }
        throw new IllegalStateException("cannot find the repository's python/switchml_torch; run through ./switchml or set -Dswitchml.home=REPO");
    }

    /** Debian's python3 (where python3-torch installs), else the first python3 on the PATH. */
    static String defaultPython() {
        return Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3";
    }
}
