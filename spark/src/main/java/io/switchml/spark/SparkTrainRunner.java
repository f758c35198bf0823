package io.switchml.spark;

import io.switchml.training.FashionMnist;
import io.switchml.training.TrainPlan;
import io.switchml.training.TrainRunner;
import io.switchml.training.TrainingSummary;
import org.apache.spark.sql.SparkSession;

import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * {@code switchml train --spark-master URL}: the same training as the worker processes of {@code train}, as one
 * Spark barrier stage of {@code workers} tasks ({@link SparkTraining}), from a Spark session this JVM starts as the
 * driver. The IDX files are read here, on the driver, and become the rows the tasks train on.
 */
public final class SparkTrainRunner {
    /** Executors' JVM options: PyTorch from the Maven jar only, one thread per rank, DJL quiet, as for worker processes. */
    static final String EXECUTOR_JAVA_OPTIONS = "-Dai.djl.offline=true -Dai.djl.pytorch.num_threads=1"
            + " -Dai.djl.pytorch.num_interop_threads=1 -Dorg.slf4j.simpleLogger.log.ai.djl=error";

    /**
     * @param master      Spark's master URL: {@code local[N]}, {@code local-cluster[W,C,M]}, {@code spark://HOST:PORT}
     * @param controller  a running switch's {@code HOST:PORT} for {@code switchml}, or null to embed one in the driver
     * @param bindAddress where the driver (and its embedded switch) listens; the executors must reach it there
     * @param sparkConf   further Spark settings, applied last
     */
    public record Options(String master, int workers, TrainPlan plan, String controller, String bindAddress,
                          Duration timeout, double target, Map<String, String> sparkConf) {
        public Options {
            Objects.requireNonNull(master, "master");
            Objects.requireNonNull(bindAddress, "bindAddress");
            sparkConf = Map.copyOf(sparkConf);
            if (workers < 1) {
                throw new IllegalArgumentException("need at least 1 worker, not " + workers);
            }
        }
    }

    private SparkTrainRunner() {
    }

    public static SparkTrainingResult run(Options options, PrintStream progress) {
        FashionMnist.requirePresent(options.plan().data());
        TrainRunner.quietOfflineEngine();
        // Local mode runs the ranks as threads of this JVM: one PyTorch thread each, as in a worker process.
        for (String p : EXECUTOR_JAVA_OPTIONS.split(" ")) {
            String[] kv = p.substring(2).split("=", 2);
            System.setProperty(kv[0], System.getProperty(kv[0], kv[1]));
        }
        FashionMnist.Split all = FashionMnist.train(options.plan().data());
        FashionMnist.Split train = options.plan().trainLimit() > 0 ? all.first(options.plan().trainLimit()) : all;
        FashionMnist.Split test = FashionMnist.test(options.plan().data());
        progress.println("spark: master " + options.master() + ", " + options.workers() + " barrier task(s), "
                + train.size() + " training images as rows, aggregation " + options.plan().aggregation());
        SparkSession.Builder builder = SparkSession.builder().master(options.master()).appName("switchml train");
        sessionConf(options).forEach(builder::config);
        SparkSession spark = builder.getOrCreate();
        try {
            BarrierOptions stage = BarrierOptions.defaults().withController(options.controller())
                    .withBindAddress(options.bindAddress()).withTimeout(options.timeout());
            return SparkTraining.train(FashionMnistRows.of(spark, train), test, options.plan(), options.workers(), stage,
                    options.target());
        } finally {
            spark.stop();
        }
    }

    /** The session's settings: the driver at the bind address, barrier checks that fail fast, executors that find our classes. */
    static Map<String, String> sessionConf(Options options) {
        boolean local = options.master().equals("local") || options.master().startsWith("local[");
        Map<String, String> conf = new LinkedHashMap<>();
        conf.put("spark.driver.host", options.bindAddress());
        conf.put("spark.driver.bindAddress", options.bindAddress());
        conf.put("spark.ui.enabled", "false");
        // A stage needing more slots than the cluster has fails with Spark's message after this many checks, 1 s
        // apart (Spark's defaults wait 40 x 15 s); a cluster gets a minute for its executors to register.
        conf.put("spark.scheduler.barrier.maxConcurrentTasksCheck.interval", "1s");
        conf.put("spark.scheduler.barrier.maxConcurrentTasksCheck.maxFailures", local ? "1" : "60");
        // A barrier() or allGather() waits at most as long as the whole run may take (Spark's default: a year).
        if (!options.timeout().isZero()) {
            conf.put("spark.barrier.sync.timeout", Math.max(1, options.timeout().toSeconds()) + "s"); // else Spark's: a year
        }
        if (!local) {
            // Executors of local-cluster and spark:// masters are other JVMs: they load switchml, DJL and PyTorch
            // from this JVM's class path (the same paths on every host), with the JVM options of a worker process.
            conf.put("spark.executor.extraClassPath", System.getProperty("java.class.path"));
            conf.put("spark.executor.extraJavaOptions", EXECUTOR_JAVA_OPTIONS);
        }
        if (options.master().startsWith("local-cluster[")) {
            conf.put("spark.master.rest.enabled", "false"); // its in-process Master would take the fixed port 6066
        }
        conf.putAll(options.sparkConf());
        return conf;
    }
}
