package io.switchml.training;

import io.switchml.collectives.Compression;
import io.switchml.launch.PlanJson;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What one training worker does. It travels to worker processes as JSON ({@link #toJson()},
 * {@link #fromArguments}); {@code config} holds the worker's all-reduce settings by property name
 * (controller, job, rank, workers, ...).
 *
 * @param config       {@code switchml.*} settings: rank and workers always, controller and job for {@code switchml}
 * @param aggregation  how gradients are summed
 * @param epochs       passes over each worker's shard
 * @param batchSize    images per step and worker (the global batch is {@code workers} times larger)
 * @param learningRate the optimizer's step size
 * @param seed         data order and initial parameters (rank 0's are broadcast to all)
 * @param data         directory of the Fashion-MNIST IDX files
 * @param trainLimit   use only the first this many training images (0: all), for quick runs and tests
 * @param bucketBytes  tensor-fusion threshold
 * @param compression  {@code topk} and {@code qsgd}: their settings (the top-k momentum comes from the optimizer)
 * @param optimizer    what applies the aggregated gradient ({@link TrainOptimizer})
 * @param framework    what trains the model (DJL unless told otherwise)
 * @param model        which model (the perceptron unless told otherwise; TensorFlow trains only that)
 */
public record TrainPlan(Map<String, String> config, Aggregation aggregation, int epochs, int batchSize, float learningRate,
                        long seed, Path data, int trainLimit, long bucketBytes, Compression compression,
                        TrainOptimizer optimizer, Framework framework, TrainModel model) {
    /** The perceptron. */
    public TrainPlan(Map<String, String> config, Aggregation aggregation, int epochs, int batchSize, float learningRate,
                     long seed, Path data, int trainLimit, long bucketBytes, Compression compression, TrainOptimizer optimizer,
                     Framework framework) {
        this(config, aggregation, epochs, batchSize, learningRate, seed, data, trainLimit, bucketBytes, compression, optimizer,
                framework, TrainModel.MLP);
    }

    /** Trained with DJL. */
    public TrainPlan(Map<String, String> config, Aggregation aggregation, int epochs, int batchSize, float learningRate,
                     long seed, Path data, int trainLimit, long bucketBytes, Compression compression, TrainOptimizer optimizer) {
        this(config, aggregation, epochs, batchSize, learningRate, seed, data, trainLimit, bucketBytes, compression, optimizer,
                Framework.DJL);
    }

    /** With the default compression settings and the aggregation's default optimizer. */
    public TrainPlan(Map<String, String> config, Aggregation aggregation, int epochs, int batchSize, float learningRate,
                     long seed, Path data, int trainLimit, long bucketBytes) {
        this(config, aggregation, epochs, batchSize, learningRate, seed, data, trainLimit, bucketBytes, Compression.DEFAULTS);
    }

    /** With the aggregation's default optimizer ({@link TrainOptimizer#defaultFor}). */
    public TrainPlan(Map<String, String> config, Aggregation aggregation, int epochs, int batchSize, float learningRate,
                     long seed, Path data, int trainLimit, long bucketBytes, Compression compression) {
        this(config, aggregation, epochs, batchSize, learningRate, seed, data, trainLimit, bucketBytes, compression,
                TrainOptimizer.defaultFor(aggregation));
    }

    public TrainPlan {
        config = Map.copyOf(config);
        java.util.Objects.requireNonNull(compression, "compression");
        java.util.Objects.requireNonNull(optimizer, "optimizer");
        java.util.Objects.requireNonNull(framework, "framework");
        if (model == null) {
            model = TrainModel.MLP; // a plan written before models could be chosen
        }
        if (framework == Framework.TENSORFLOW && model != TrainModel.MLP) {
            throw new IllegalArgumentException("--framework tensorflow trains the perceptron only; --model " + model
                    + " trains with djl");
        }
        if (compression.momentum() != 0) {
            throw new IllegalArgumentException("the top-k momentum correction follows the optimizer (sgd with topk); got "
                    + compression.toSpec());
        }
        if (epochs < 1 || batchSize < 1 || !(learningRate > 0) || trainLimit < 0 || bucketBytes < 4) {
            throw new IllegalArgumentException("need epochs >= 1, batch size >= 1, a positive learning rate, train limit >= 0"
                    + " and a fusion bucket of at least 4 bytes; got epochs=" + epochs + " batch=" + batchSize + " lr="
                    + learningRate + " limit=" + trainLimit + " bucket=" + bucketBytes);
        }
    }

    public TrainPlan withConfig(String key, String value) {
        Map<String, String> c = new LinkedHashMap<>(config);
        c.put(key, value);
        return new TrainPlan(c, aggregation, epochs, batchSize, learningRate, seed, data, trainLimit, bucketBytes, compression,
                optimizer, framework, model);
    }

    /** The same plan with another aggregation (a comparison runs one plan per method), optimizer and learning rate. */
    public TrainPlan withAggregation(Aggregation a, TrainOptimizer o, float lr) {
        return new TrainPlan(config, a, epochs, batchSize, lr, seed, data, trainLimit, bucketBytes, compression, o, framework,
                model);
    }

    /** The same plan trained by another framework. */
    public TrainPlan withFramework(Framework f) {
        return new TrainPlan(config, aggregation, epochs, batchSize, learningRate, seed, data, trainLimit, bucketBytes,
                compression, optimizer, f, model);
    }

    /** The same plan training another model. */
    public TrainPlan withModel(TrainModel m) {
        return new TrainPlan(config, aggregation, epochs, batchSize, learningRate, seed, data, trainLimit, bucketBytes,
                compression, optimizer, framework, m);
    }

    /** The same plan with another aggregation, the same optimizer. */
    public TrainPlan withAggregation(Aggregation a) {
        return withAggregation(a, optimizer, learningRate);
    }

    /** The compression settings the workers' all-reduce runs with: the top-k momentum correction set by the optimizer. */
    public Compression effectiveCompression() {
        return optimizer.compression(compression, aggregation);
    }

    /** The plan as the one argument of a worker process ({@link PlanJson}). */
    public String toJson() {
        return PlanJson.write(this);
    }

    public static TrainPlan fromJson(String json) {
        return PlanJson.read(json, TrainPlan.class, "training worker");
    }

    public static TrainPlan fromArguments(String[] args) {
        return PlanJson.fromArguments(args, TrainPlan.class, "training worker");
    }
}
