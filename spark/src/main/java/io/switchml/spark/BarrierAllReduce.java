package io.switchml.spark;

import io.switchml.agent.HostAggregation;
import io.switchml.client.HostLayout;
import io.switchml.client.SwitchMLConfig;
import io.switchml.collectives.Compression;
import io.switchml.launch.EmbeddedSwitch;
import io.switchml.launch.JobSecret;
import io.switchml.launch.WorkerConnection;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.BarrierTaskInfo;
import org.apache.spark.api.java.JavaFutureAction;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag$;
import scala.reflect.ClassTag;
import scala.runtime.AbstractFunction1;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Runs a function on every rank of one Spark barrier stage with an {@code AllReduce} of the stage's ranks
 * already connected: rank = partition id, workers = partitions (Spark's barrier execution mode schedules them
 * all at once, or none). The job at the switch is named after the run and the stage attempt, so when a task
 * fails and Spark retries the stage, the new attempt forms a new job; the failed attempt's ranks have left
 * theirs (closing their all-reduce), so nothing of it stays at the switch.
 *
 * <p>The barrier stage is a shuffle-map stage (its results go through a one-partition shuffle to the driver):
 * Spark retries a failed barrier shuffle-map stage as a whole, but aborts a failed barrier result stage.
 * Spark allows {@code spark.stage.maxConsecutiveAttempts} (default 4) attempts.
 */
public final class BarrierAllReduce {
    private static final Logger LOG = LoggerFactory.getLogger(BarrierAllReduce.class);
    private static final AtomicLong RUNS = new AtomicLong();

    private BarrierAllReduce() {
    }

    /**
     * Runs {@code function} on every partition of {@code data} as one barrier stage and returns what the ranks
     * returned, in rank order. With {@code switchml} and no controller in {@code options}, a switch is embedded in
     * this (the driver's) JVM for the run, at {@link BarrierOptions#bindAddress()}.
     *
     * @throws BarrierStageException when the stage fails (Spark's error, a rank's exception) or times out
     */
    public static <T, R extends Serializable> List<R> run(JavaRDD<T> data, BarrierOptions options, RankFunction<T, R> function) {
        JavaSparkContext spark = JavaSparkContext.fromSparkContext(data.context());
        int workers = data.getNumPartitions();
        String run = "spark-" + spark.sc().applicationId() + "-" + RUNS.incrementAndGet();
        EmbeddedSwitch embedded = null;
        Map<String, String> settings = new LinkedHashMap<>(options.settings());
        settings.put(SwitchMLConfig.Key.WORKERS.property(), String.valueOf(workers));
        try {
            if (options.benchAlgorithm().needsSwitch()) {
                String controller = options.controller();
                if (controller == null) {
                    embedded = EmbeddedSwitch.start(options.bindAddress(), 1);
                    controller = embedded.controller();
                    LOG.info("embedded switch for {}: {}", run, embedded.describe());
                }
                settings.put(SwitchMLConfig.Key.CONTROLLER.property(), controller);
            }
            @SuppressWarnings("unchecked")
            ClassTag<RankResult<R>> tag = (ClassTag<RankResult<R>>) (ClassTag<?>) ClassTag$.MODULE$.apply(RankResult.class);
            JavaRDD<RankResult<R>> ranks = new JavaRDD<>(data.rdd().barrier()
                    .mapPartitions(new BarrierTask<T, R>(run, options, settings, function), false, tag), tag)
                    .repartition(1); // makes the barrier stage a shuffle-map stage, which Spark retries (class comment)
            return collect(spark, ranks, run, workers, options);
        } finally {
            if (embedded != null) {
                embedded.close();
            }
        }
    }

    private static <R extends Serializable> List<R> collect(JavaSparkContext spark, JavaRDD<RankResult<R>> ranks, String run,
                                                            int workers, BarrierOptions options) {
        spark.setLocalProperty("spark.job.interruptOnCancel", "true");
        spark.setJobDescription("switchml " + options.algorithm() + ": " + workers + " ranks (" + run + ")");
        JavaFutureAction<List<RankResult<R>>> action = ranks.collectAsync();
        List<RankResult<R>> results;
        try {
            results = options.timeout().isZero() ? action.get()
                    : action.get(options.timeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            action.cancel(true);
            throw new BarrierStageException("the barrier stage of " + workers + " ranks (" + run + ") did not finish within "
                    + options.timeout() + "; cancelled it", e);
        } catch (InterruptedException e) {
            action.cancel(true);
            Thread.currentThread().interrupt();
            throw new BarrierStageException("interrupted while waiting for the barrier stage (" + run + ")", e);
        } catch (ExecutionException e) {
            throw new BarrierStageException("the barrier stage of " + workers + " ranks (" + run + ") failed: "
                    + e.getCause().getMessage(), e.getCause());
        } finally {
            spark.setLocalProperty("spark.job.interruptOnCancel", null);
            spark.setJobDescription(null);
        }
        if (results.size() != workers) {
            throw new BarrierStageException("the barrier stage returned " + results.size() + " results for " + workers
                    + " ranks (" + run + ")", null);
        }
        List<RankResult<R>> ordered = new ArrayList<>(results);
        ordered.sort(Comparator.comparingInt(RankResult::rank));
        List<R> values = new ArrayList<>();
        for (RankResult<R> r : ordered) {
            values.add(r.value());
        }
        return values;
    }

    /** One task of the stage: connects its rank, runs the function, leaves the job (also when the function fails). */
    private static final class BarrierTask<T, R extends Serializable>
            extends AbstractFunction1<scala.collection.Iterator<T>, scala.collection.Iterator<RankResult<R>>>
            implements Serializable {
        private static final long serialVersionUID = 1L;
        private final String run;
        private final BarrierOptions options;
        private final Map<String, String> settings;
        private final RankFunction<T, R> function;

        BarrierTask(String run, BarrierOptions options, Map<String, String> settings, RankFunction<T, R> function) {
            this.run = run;
            this.options = options;
            this.settings = new LinkedHashMap<>(settings);
            this.function = function;
        }

        @Override
        public scala.collection.Iterator<RankResult<R>> apply(scala.collection.Iterator<T> partition) {
            try {
                return CollectionConverters.asScala(call(CollectionConverters.asJava(partition)));
            } catch (RuntimeException e) {
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException("rank " + BarrierTaskContext.get().partitionId() + " failed: " + e, e);
            }
        }

        private Iterator<RankResult<R>> call(Iterator<T> partition) throws Exception {
            BarrierTaskContext context = BarrierTaskContext.get();
            int rank = context.partitionId();
            int workers = context.getTaskInfos().length;
            int attempt = context.stageAttemptNumber();
            String job = run + "-stage" + context.stageId() + "-attempt" + attempt;
            Map<String, String> mine = new LinkedHashMap<>(settings);
            mine.put(SwitchMLConfig.Key.RANK.property(), String.valueOf(rank));
            mine.put(SwitchMLConfig.Key.WORKERS.property(), String.valueOf(workers));
            mine.put(SwitchMLConfig.Key.JOB.property(), job);
            if (options.benchAlgorithm().needsSwitch() && !JobSecret.named(mine)) {
                mine.put(SwitchMLConfig.Key.JOB_SECRET.property(), sharedSecret(context, rank));
            }
            String host = executorHost(context, rank);
            if (!options.benchAlgorithm().needsSwitch() && !host.isEmpty()) {
                // The TCP baselines listen on the executor's address, which the other executors reach.
                mine.putIfAbsent(SwitchMLConfig.Key.LOCAL_ADDRESS.property(), host);
            }
            // The tasks of one executor share its process: they sum there, through one agent, as one contribution
            // (algorithms that sum through a switch; the others keep one worker per rank).
            mine.putIfAbsent(SwitchMLConfig.Key.HOST_LAYOUT.property(), executorLayout(context).toString());
            try (WorkerConnection connection = HostAggregation.open(options.benchAlgorithm(), mine,
                    Compression.parse(options.compression()), new BarrierPeerExchange(context))) {
                R value = function.apply(new RankContext(rank, workers, attempt, job, connection.allReduce(), context), partition);
                return List.of(new RankResult<>(rank, value)).iterator();
            }
        }

        /**
         * The attempt's job secret (docs/security.md, "Job secrets"): rank 0 makes it and the barrier hands it to
         * the other ranks, so it exists only in the stage's tasks, never in the driver's closure or event log.
         */
        private static String sharedSecret(BarrierTaskContext context, int rank) {
            return context.allGather(rank == 0 ? JobSecret.fresh() : "")[0];
        }

        /**
         * The stage's tasks grouped by their executor's address ({@code host:port}: one process each); a task whose
         * address Spark does not give is a group of its own.
         */
        private static HostLayout executorLayout(BarrierTaskContext context) {
            List<String> executors = new ArrayList<>();
            BarrierTaskInfo[] tasks = context.getTaskInfos();
            for (int rank = 0; rank < tasks.length; rank++) {
                String address = tasks[rank].address();
                executors.add(address == null || address.isBlank() ? "task " + rank : address);
            }
            return HostLayout.byKey(executors);
        }

        /** The host part of the task's executor address ({@code host:port}); empty when Spark gives none. */
        private String executorHost(BarrierTaskContext context, int rank) {
            String address = context.getTaskInfos()[rank].address();
            if (address == null || address.isBlank()) {
                return "";
            }
            int colon = address.lastIndexOf(':');
            String host = colon > 0 ? address.substring(0, colon) : address;
            return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        }
    }
}
