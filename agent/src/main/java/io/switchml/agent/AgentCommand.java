package io.switchml.agent;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * One rank's worker process for a local PyTorch process; the Python package starts it, through its own
 * {@link #main} on this module's class path (target/agent-classpath.txt): no Spark or DJL to load, and no
 * other command's options to read (docs/pytorch.md, start-up). {@code switchml agent} runs the same command.
 */
@Command(name = "agent", mixinStandardHelpOptions = true,
        description = {"Join a job as one rank and serve its all-reduces to a local process (PyTorch's DDP comm hook,"
                + " package switchml_torch) through shared memory and a Unix-domain socket.",
                "Leaves the job when that process closes the socket or dies."})
public final class AgentCommand implements Callable<Integer> {
    @Option(names = "--algo", defaultValue = "switchml", description = "switchml, ring or ps (default: ${DEFAULT-VALUE}).")
    String algorithm;

    @Option(names = "--rank", required = true, description = "This worker's rank.")
    int rank;

    @Option(names = "--workers", required = true, description = "Ranks in the job.")
    int workers;

    @Option(names = "--controller", description = "HOST:PORT of the switch's controller (switchml).")
    String controller;

    @Option(names = "--job", description = "The job's name at the switch (switchml).")
    String job;

    @Option(names = "--socket", required = true, description = "Path of the Unix-domain socket to listen on.")
    Path socket;

    @Option(names = "--shm", required = true, description = "Shared memory file to create and map, e.g. under /dev/shm.")
    Path sharedMemory;

    @Option(names = "--shm-bytes", defaultValue = "268435456", description = "Its size in bytes: room for the tensors in flight (default: ${DEFAULT-VALUE}).")
    long sharedMemoryBytes;

    @Option(names = "--set", description = "A worker setting NAME=VALUE (switchml.* names, e.g. elementsPerPacket=1024); repeatable.")
    Map<String, String> settings = new LinkedHashMap<>();

    @Option(names = "--connect-timeout", defaultValue = "PT60S", description = "How long to wait for the process to connect (default: ${DEFAULT-VALUE}).")
    Duration connectTimeout;

    @Option(names = "--operation-timeout", defaultValue = "PT120S", description = "How long one all-reduce may take (default: ${DEFAULT-VALUE}).")
    Duration operationTimeout;

    @Option(names = "--idle-timeout", defaultValue = "PT30M", description = "Leave the job when the process sends nothing for this long (default: ${DEFAULT-VALUE}).")
    Duration idleTimeout;

    public static void main(String[] args) {
        CommandLine line = new CommandLine(new AgentCommand());
        line.setExecutionExceptionHandler((e, commandLine, parseResult) -> {
            commandLine.getErr().println("switchml agent: " + e.getMessage());
            return 1;
        });
        System.exit(line.execute(args));
    }

    @Override
    public Integer call() {
        Map<String, String> properties = new LinkedHashMap<>();
        settings.forEach((k, v) -> properties.put(k.startsWith("switchml.") ? k : "switchml." + k, v));
        AgentOptions options = new AgentOptions(algorithm, rank, workers, controller, job, socket, sharedMemory,
                sharedMemoryBytes, properties, connectTimeout, operationTimeout, idleTimeout);
        int code = new Agent(options, System.err).run();
        if (code == Agent.PROCESS_DIED) {
            // The local process died: end without leaving the job (no Leave, no orderly close of the
            // controller's connection), so the controller tells the other ranks that this rank died.
            System.err.flush();
            Runtime.getRuntime().halt(code);
        }
        return code;
    }
}
