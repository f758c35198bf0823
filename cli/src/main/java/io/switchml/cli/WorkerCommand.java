package io.switchml.cli;

import io.switchml.bench.BenchFormat;
import io.switchml.bench.BenchRow;
import io.switchml.bench.BenchWorker;
import io.switchml.bench.SizeReport;
import io.switchml.bench.WorkerPlan;
import io.switchml.client.SwitchMLConfig;
import io.switchml.collectives.Compression;
import io.switchml.launch.AllReduceAlgorithm;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/** One worker joining an existing job: for runs across several hosts. */
@Command(name = "worker", mixinStandardHelpOptions = true,
        description = "Join a job at a running switch and all-reduce generated tensors, printing this worker's timings.")
final class WorkerCommand implements Callable<Integer> {
    @Option(names = "--controller", description = "HOST:PORT of the switch's controller (default: localhost:50099).")
    String controller;

    @Option(names = "--rank", description = "This worker's rank, 0..workers-1 (default: from the environment: SWITCHML_RANK,"
            + " RANK, SLURM_PROCID or JOB_COMPLETION_INDEX).")
    Integer rank;

    @Option(names = "--workers", description = "Number of workers in the job (default: from the environment:"
            + " SWITCHML_WORKERS, WORLD_SIZE or SLURM_NTASKS).")
    Integer workers;

    @Option(names = "--job", description = "Job name, the same on every worker (default: default).")
    String job;

    @Option(names = "--local-address", description = "IPv4 address to send from (default: the one that routes to the controller).")
    String localAddress;

    @Option(names = "--config", description = "Properties file of switchml.* settings (the options here take precedence).")
    Path configFile;

    @Option(names = "--pause-ms", defaultValue = "0", description = "Idle time before each timed all-reduce, to measure"
            + " what a joined job costs while it waits (default: ${DEFAULT-VALUE}).")
    long pauseMs;

    @Mixin
    SizeOptions sizes;

    @Mixin
    WorkerTuning tuning;

    @Override
    public Integer call() {
        SwitchMLConfig.Builder builder = SwitchMLConfig.builder();
        if (configFile != null) {
            builder.file(configFile);
        }
        builder.environment(System.getenv()).systemProperties();
        builder.settings(tuning.settings());
        if (rank != null) {
            builder.rank(rank);
        }
        if (workers != null) {
            builder.workers(workers);
        }
        if (controller != null) {
            builder.controller(controller);
        }
        if (job != null) {
            builder.job(job);
        }
        if (localAddress != null) {
            builder.localAddress(localAddress);
        }
        SwitchMLConfig config = builder.build();
        WorkerPlan plan = new WorkerPlan(config.toMap(), sizes.bytes(), sizes.iterations, sizes.warmup, sizes.verify,
                sizes.dataType(), sizes.seed, AllReduceAlgorithm.switchMl(), Compression.DEFAULTS, pauseMs,
                sizes.sparsity());
        System.out.println("rank " + config.rank() + " of " + config.workers() + " joining job '" + config.job() + "' at "
                + (config.shards().isEmpty() ? config.controller() : config.shards().size() + " shards " + config.shards()));
        System.out.println(BenchFormat.TABLE.header().orElseThrow());
        boolean[] failed = {false};
        new BenchWorker(plan).run(report -> {
            BenchRow row = BenchRow.of("switchml", config.workers(), sizes.dataType().name().toLowerCase(java.util.Locale.ROOT),
                    List.of(report));
            failed[0] |= Boolean.FALSE.equals(report.verified());
            System.out.println(BenchFormat.TABLE.line(row));
        });
        return failed[0] ? 2 : 0;
    }
}
