package io.switchml.training;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one training worker does. It travels to worker processes as {@code key=value} arguments
 * ({@link #toArgs()}, {@link #parse}); keys starting with {@code switchml.} are the worker's
 * all-reduce configuration (controller, job, rank, workers, ...).
 *
 * @param config       {@code switchml.*} settings: rank and workers always, controller and job for {@code switchml}
 * @param aggregation  how gradients are summed
 * @param epochs       passes over each worker's shard
 * @param batchSize    images per step and worker (the global batch is {@code workers} times larger)
 * @param learningRate Adam's step size
 * @param seed         data order and initial parameters (rank 0's are broadcast to all)
 * @param data         directory of the Fashion-MNIST IDX files
 * @param trainLimit   use only the first this many training images (0: all), for quick runs and tests
 * @param bucketBytes  tensor-fusion threshold
 */
public record TrainPlan(Map<String, String> config, Aggregation aggregation, int epochs, int batchSize, float learningRate,
                        long seed, Path data, int trainLimit, long bucketBytes) {
    public TrainPlan {
        config = Map.copyOf(config);
        if (epochs < 1 || batchSize < 1 || !(learningRate > 0) || trainLimit < 0 || bucketBytes < 4) {
            throw new IllegalArgumentException("need epochs >= 1, batch size >= 1, a positive learning rate, train limit >= 0"
                    + " and a fusion bucket of at least 4 bytes; got epochs=" + epochs + " batch=" + batchSize + " lr="
                    + learningRate + " limit=" + trainLimit + " bucket=" + bucketBytes);
        }
    }

    public TrainPlan withConfig(String key, String value) {
        Map<String, String> c = new LinkedHashMap<>(config);
        c.put(key, value);
        return new TrainPlan(c, aggregation, epochs, batchSize, learningRate, seed, data, trainLimit, bucketBytes);
    }

    public List<String> toArgs() {
        List<String> args = new ArrayList<>();
        config.forEach((k, v) -> args.add(k + "=" + v));
        args.add("aggregation=" + aggregation.id());
        args.add("epochs=" + epochs);
        args.add("batch=" + batchSize);
        args.add("lr=" + learningRate);
        args.add("seed=" + seed);
        args.add("data=" + data);
        args.add("limit=" + trainLimit);
        args.add("bucket=" + bucketBytes);
        return args;
    }

    public static TrainPlan parse(String[] args) {
        Map<String, String> config = new LinkedHashMap<>();
        Map<String, String> plan = new LinkedHashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("training worker argument '" + arg + "' is not key=value");
            }
            String key = arg.substring(0, eq);
            (key.startsWith("switchml.") ? config : plan).put(key, arg.substring(eq + 1));
        }
        return new TrainPlan(config, Aggregation.named(required(plan, "aggregation")),
                Integer.parseInt(required(plan, "epochs")), Integer.parseInt(required(plan, "batch")),
                Float.parseFloat(required(plan, "lr")), Long.parseLong(required(plan, "seed")), Path.of(required(plan, "data")),
                Integer.parseInt(required(plan, "limit")), Long.parseLong(required(plan, "bucket")));
    }

    private static String required(Map<String, String> plan, String key) {
        String v = plan.get(key);
        if (v == null) {
            throw new IllegalArgumentException("training worker argument " + key + "=... is missing");
        }
        return v;
    }
}
