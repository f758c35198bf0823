package io.switchml.spark;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Spark standalone cluster on loopback from the Maven jars: a Master and Worker processes (JVMs on this test's
 * class path), whose executors are JVMs too. Spark's Worker builds each executor's command from SPARK_HOME (its
 * {@code jars/} directory, here empty, and SPARK_SCALA_VERSION to name no build directory); the classes come from
 * {@code spark.executor.extraClassPath}, which the driver sets to this class path.
 */
final class StandaloneCluster implements AutoCloseable {
    private static final Pattern MASTER_URL = Pattern.compile("Starting Spark master at (spark://\\S+)");
    private static final long START_SECONDS = 90;

    private final Path home;
    private final List<Process> processes = new ArrayList<>();
    private final String masterUrl;

    StandaloneCluster(int workers, int coresPerWorker, String workerMemory) throws IOException, InterruptedException {
        home = Files.createTempDirectory("switchml-spark-cluster");
        Files.createDirectories(home.resolve("spark-home/jars"));
        try {
            CompletableFuture<String> url = new CompletableFuture<>();
            start("master", List.of("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0",
                    "--webui-port", "0"), line -> {
                Matcher m = MASTER_URL.matcher(line);
                if (m.find()) {
                    url.complete(m.group(1));
                }
            }, url);
            masterUrl = await(url, "the Spark master to print its URL");
            List<CompletableFuture<Boolean>> registered = new ArrayList<>();
            for (int w = 0; w < workers; w++) {
                CompletableFuture<Boolean> done = new CompletableFuture<>();
                registered.add(done);
                Path work = Files.createDirectories(home.resolve("work-" + w));
                start("worker-" + w, List.of("org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", "0",
                        "--webui-port", "0", "--cores", String.valueOf(coresPerWorker), "--memory", workerMemory,
                        "--work-dir", work.toString(), masterUrl), line -> {
                    if (line.contains("Successfully registered with master")) {
                        done.complete(true);
                    }
                }, done);
            }
            for (CompletableFuture<Boolean> r : registered) {
                await(r, "a Spark worker to register with the master");
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            close();
            throw e;
        }
    }

    String masterUrl() {
        return masterUrl;
    }

    /** Starts a Spark daemon; {@code onLine} sees its output; {@code ready} fails if it exits first. */
    private void start(String name, List<String> mainAndArgs, Consumer<String> onLine, CompletableFuture<?> ready)
            throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx512m");
        // The daemons' own start-up lines, which start() waits for, and Spark's warnings.
        command.add("-Dorg.slf4j.simpleLogger.log.org.apache.spark=warn");
        command.add("-Dorg.slf4j.simpleLogger.log.org.apache.spark.deploy.master.Master=info");
        command.add("-Dorg.slf4j.simpleLogger.log.org.apache.spark.deploy.worker.Worker=info");
        command.add("-Dorg.slf4j.simpleLogger.log.org.sparkproject=warn"); // Spark's Jetty
        command.add("-Dspark.master.rest.enabled=false"); // the Master's REST server would take the fixed port 6066
        command.addAll(List.of(System.getProperty("switchml.spark.jvm.options", "").trim().split("\\s+")));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.addAll(mainAndArgs);
        command.removeIf(String::isEmpty);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("SPARK_HOME", home.resolve("spark-home").toString());
        builder.environment().put("SPARK_SCALA_VERSION", "2.13");
        builder.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        Process process = builder.start();
        processes.add(process);
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    System.err.println("[spark " + name + "] " + line);
                    onLine.accept(line);
                }
            } catch (IOException e) {
                // the process ended
            }
            ready.completeExceptionally(new IllegalStateException("spark " + name + " exited before it was ready"));
        }, "spark-" + name + "-output");
        reader.setDaemon(true);
        reader.start();
    }

    private static <T> T await(CompletableFuture<T> future, String what) throws InterruptedException {
        try {
            return future.get(START_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new IllegalStateException("timed out after " + START_SECONDS + " s waiting for " + what, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("while waiting for " + what + ": " + e.getCause().getMessage(), e.getCause());
        }
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.descendants().forEach(ProcessHandle::destroyForcibly); // executors
            p.destroyForcibly();
        }
        for (Process p : processes) {
            try {
                p.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try (var files = Files.walk(home)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
