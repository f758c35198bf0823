package io.switchml.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * `switchml switch` started as its own process, as a script starts it: the test waits for its ready
 * line; its output is read to the end meanwhile, so the switch never blocks on a full pipe.
 *
 * @param linesBeforeReady what it printed before the ready line (such as the metrics line)
 * @param readyLine        its {@code switchml switch ready: ...} line
 */
record SwitchProcess(Process process, List<String> linesBeforeReady, String readyLine) {
    private static final String READY = "switchml switch ready:";

    /** Starts {@code switchml switch ARGS} with this JVM's class path and waits up to 60 s for its ready line. */
    static SwitchProcess start(String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), SwitchMlCommand.class.getName(), "switch"));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        List<String> before = new ArrayList<>();
        CompletableFuture<String> ready = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try {
                for (String line; (line = out.readLine()) != null; ) {
                    if (!ready.isDone()) {
                        if (line.contains(READY)) {
                            ready.complete(line);
                        } else {
                            before.add(line);
                        }
                    }
                }
            } catch (IOException e) {
                ready.completeExceptionally(new UncheckedIOException(e));
            }
            ready.completeExceptionally(new AssertionError("the switch ended without printing its ready line:\n"
                    + String.join("\n", before)));
        }, "switch-output");
        reader.setDaemon(true);
        reader.start();
        try {
            String line = ready.get(60, TimeUnit.SECONDS);
            return new SwitchProcess(process, List.copyOf(before), line);
        } catch (Exception e) {
            process.destroyForcibly();
            throw e;
        }
    }

    /** Sends the process a signal by name, such as STOP or CONT. */
    void signal(String name) throws Exception {
        new ProcessBuilder("kill", "-" + name, String.valueOf(process.pid())).inheritIO().start().waitFor(10, TimeUnit.SECONDS);
    }
}
