package io.switchml.launch;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The switch of an emulated rack: {@code switchml switch} in the rack's switch namespace, started
 * for a bench or training run in the rack and stopped after it (docs/benchmarks-and-rack.md, The emulated rack).
 */
public final class RackSwitch {
    private RackSwitch() {
    }

    /** The main class of the {@code switchml} command (module cli, which depends on the launchers). */
    public static final String SWITCH_MAIN = "io.switchml.cli.SwitchMlCommand";
    /** The switch's first UDP port. */
    public static final int SWITCH_PORT = 0xBEE0;
    /** Its controller's port, on {@link Rack#SWITCH_ADDRESS}. */
    public static final int CONTROLLER_PORT = 50099;
    /** The launchers give every job a secret ({@link JobSecret}), so the switches that their ranks join require one. */
    private static final List<String> SECRETS_REQUIRED = List.of("--require-job-secrets");
    /** The rack's namespaces are reached from the rack only, so its switches trust its networks (protected mode). */
    private static final List<String> RACK_TRUSTED = List.of("--trusted-networks", "on");
    private static final String SWITCH_READY = "switchml switch ready";
    /** How long a switch gets to close on SIGTERM before it is killed. */
    private static final long STOP_GRACE_SECONDS = 5;
    private static final long CACHE_GRACE_SECONDS = 60;
    /** How long {@link #stop} waits, once the switch has ended, for the rest of its output to be read. */
    private static final long DRAIN_SECONDS = 10;
    /** The threads reading the output of the switches started here, by pid, until they reach its end. */
    private static final java.util.Map<Long, Thread> PUMPS = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Starts {@code switchml switch} in the rack's switch namespace (controller on {@link Rack#SWITCH_ADDRESS}:
     * {@link #CONTROLLER_PORT}) and returns once it is ready; its output goes to {@code progress}. Stop it with
     * {@link #stop}.
     */
    public static Process start(Rack rack, int switchPorts, PrintStream progress) throws InterruptedException {
        return start(rack, 0, switchPorts, progress);
    }

    /** The same for switch process {@code index} of the rack (a shard, on {@link Rack#switchAddress}). */
    public static Process start(Rack rack, int index, int switchPorts, PrintStream progress) throws InterruptedException {
        String address = rack.switchAddress(index);
        return launchSwitch(rack.switchNamespace(index), address, address, switchPorts, SECRETS_REQUIRED,
                rack.switchProcesses() == 1 ? "switch" : "switch " + index, progress);
    }

    /**
     * A rack of leaves (docs/ARCHITECTURE.md section 9): starts the spine in its namespace (on every address: each
     * uplink has its own), then each leaf on its rack's bridge, joined to the spine over its uplink, adding each
     * process to {@code started} as it starts (as {@link #startAll} does; the caller's {@link #stopAll} stops them).
     * Returns the leaves' controllers' host:port, leaf 0 first, once all are ready.
     */
    public static List<String> startHierarchy(Rack rack, int switchPorts, PrintStream progress, List<Process> started)
            throws InterruptedException {
        started.add(launchSwitch(rack.spineNamespace(), "0.0.0.0", "0.0.0.0", switchPorts, List.of(), "spine", progress));
        int leaves = rack.spec().leaves();
        List<String> controllers = new ArrayList<>();
        for (int i = 0; i < leaves; i++) {
            // The dataplane on every address: workers reach it on the bridge, the spine on the uplink.
            started.add(launchSwitch(rack.leafNamespace(i), "0.0.0.0", rack.leafAddress(i), switchPorts,
                    leafRole(rack.spineAddress(i), i, leaves, rack.leafUplinkAddress(i)), "leaf " + i, progress));
            controllers.add(rack.leafAddress(i) + ":" + CONTROLLER_PORT);
        }
        return controllers;
    }

    /**
     * A leaf's options: leaf {@code index} of {@code leaves} under the spine at {@code spineAddress}; its ranks
     * present their job's secret (the spine takes the leaves, which present none).
     */
    private static List<String> leafRole(String spineAddress, int index, int leaves, String uplinkAddress) {
        List<String> role = new ArrayList<>(List.of("--spine", spineAddress + ":" + CONTROLLER_PORT, "--leaf-index",
                String.valueOf(index), "--leaves", String.valueOf(leaves), "--uplink-address", uplinkAddress));
        role.addAll(SECRETS_REQUIRED);
        return role;
    }

    /**
     * {@code switchml switch} in namespace {@code ns} on the rack's ports, its dataplane on {@code bind} and its
     * controller on {@code controllerBind}, with {@code role}'s options (a leaf's); returns once it is ready.
     */
    private static Process launchSwitch(String ns, String bind, String controllerBind, int switchPorts, List<String> role,
                                        String label, PrintStream progress) throws InterruptedException {
        List<String> options = new ArrayList<>(List.of("--bind", bind, "--controller-bind", controllerBind,
                "--port", String.valueOf(SWITCH_PORT), "--ports", String.valueOf(switchPorts),
                "--controller-port", String.valueOf(CONTROLLER_PORT)));
        options.addAll(role);
        options.addAll(RACK_TRUSTED);
        return launch(ns, options, label, progress);
    }

    /** Starts {@code switchml switch OPTIONS} in namespace {@code ns} and returns once it is ready. */
    private static Process launch(String ns, List<String> options, String label, PrintStream progress)
            throws InterruptedException {
        List<String> command = new ArrayList<>(Rack.inNamespace(ns));
        ChildJvm jvm = ChildJvm.of("switch");
        command.addAll(jvm.command());
        command.addAll(List.of("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", System.getProperty("java.class.path"),
                SWITCH_MAIN, "switch"));
        command.addAll(options);
        Process p;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).start();
            jvm.started(p);
        } catch (java.io.IOException e) {
            jvm.notStarted();
            throw new LaunchException("cannot start the rack's " + label + " (" + String.join(" ", command) + "): "
                    + e.getMessage());
        }
        try {
            p.getOutputStream().close();
        } catch (java.io.IOException ignored) {
            // it reads nothing
        }
        java.util.Deque<String> last = new java.util.concurrent.ConcurrentLinkedDeque<>();
        java.util.concurrent.CompletableFuture<Boolean> ready = drain(p, label, progress, last);
        boolean ok;
        try {
            ok = ready.get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            ok = false;
        } catch (java.util.concurrent.ExecutionException e) {
            ok = false;
        }
        if (!ok) {
            p.destroyForcibly();
            throw new LaunchException("the rack's " + label + " did not get ready within 60 s (" + String.join(" ", command)
                    + "):\n" + String.join("\n", last));
        }
        return p;
    }

    /**
     * Starts the thread that reads the switch's output (standard output and error, one pipe) to its end, echoing
     * its lines to {@code progress} but for the JDK's own notices and keeping the last 20 in {@code last}; the
     * future completes with true at the ready line, false where the output ends before it. {@link #stop} waits for
     * the thread, so that what a switch and the JVMs it starts print as they close is read, not cut off.
     */
    static java.util.concurrent.CompletableFuture<Boolean> drain(Process p, String label, PrintStream progress,
                                                                java.util.Deque<String> last) {
        java.util.concurrent.CompletableFuture<Boolean> ready = new java.util.concurrent.CompletableFuture<>();
        Thread pump = new Thread(() -> {
            try (var r = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream(),
                    java.nio.charset.StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    if (ChildJvm.jvmNotice(line)) {
                        continue;
                    }
                    progress.println("[" + label + "] " + line);
                    if (line.contains(SWITCH_READY)) {
                        ready.complete(true);
                    } else {
                        last.addLast(line);
                        if (last.size() > 20) {
                            last.pollFirst();
                        }
                    }
                }
            } catch (java.io.IOException ignored) {
                // the switch ended
            } finally {
                ready.complete(false);
                PUMPS.remove(p.pid());
            }
        }, "rack-switch-output");
        pump.setDaemon(true);
        PUMPS.put(p.pid(), pump);
        pump.start();
        return ready;
    }

    /**
     * Starts every switch process of the rack ({@link Rack#switchProcesses()}: the fabric's, or one per switch host)
     * and adds each to {@code started} as it starts, so the caller's {@link #stopAll} stops those that did even when a
     * later one fails. Returns their controllers' host:port, in shard order.
     */
    public static List<String> startAll(Rack rack, int switchPorts, PrintStream progress, List<Process> started)
            throws InterruptedException {
        List<String> controllers = new ArrayList<>();
        for (int i = 0; i < rack.switchProcesses(); i++) {
            started.add(start(rack, i, switchPorts, progress));
            controllers.add(rack.switchAddress(i) + ":" + CONTROLLER_PORT);
        }
        return controllers;
    }

    /** Stops every switch {@link #startAll} started. */
    public static void stopAll(List<Process> switches) throws InterruptedException {
        for (Process sw : switches) {
            stop(sw);
        }
    }

    /**
     * Stops a switch {@link #start} started (null: nothing to stop): SIGTERM first, so that it removes its
     * shared-memory directory under /dev/shm as it closes, then SIGKILL for what still runs after a few seconds (a
     * minute for one that writes its ahead-of-time cache as it exits).
     *
     * <p>The SIGTERM goes through the process's handle, not {@link Process#destroy()}: that one also closes this
     * side's ends of the child's pipes, so whatever the switch writes while it closes meets a pipe without a reader.
     * A JVM that writes its ahead-of-time cache at exit prints its notices there and then starts the JVM that
     * assembles the cache with the same standard output and error; that JVM's launcher writes its first line before
     * it ignores SIGPIPE and is killed by it at once, and the key's cache is never written (docs/ARCHITECTURE.md
     * section 18). Through the handle the pipe stays open and the reader started with the switch drains it to its
     * end.
     */
    public static void stop(Process sw) throws InterruptedException {
        if (sw != null) {
            long grace = ChildJvm.writesCacheAtExit(sw.toHandle()) ? CACHE_GRACE_SECONDS : STOP_GRACE_SECONDS;
            Thread pump = PUMPS.get(sw.pid());
            sw.toHandle().destroy();
            if (!sw.waitFor(grace, TimeUnit.SECONDS)) {
                sw.descendants().forEach(ProcessHandle::destroyForcibly);
                sw.destroyForcibly();
                sw.waitFor(10, TimeUnit.SECONDS);
            }
            if (pump != null) {
                pump.join(TimeUnit.SECONDS.toMillis(DRAIN_SECONDS));
            }
        }
    }
}
