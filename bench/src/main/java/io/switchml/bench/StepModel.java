package io.switchml.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongToDoubleFunction;

/**
 * One training step of data-parallel SGD as PyTorch DDP runs it (docs/COST_MODEL.md, "Whole models"): a
 * forward pass, then a backward pass during which gradient buckets become ready, each as soon as the
 * backward has produced its bytes (gradients arrive in proportion to time); one all-reduce at a time, in
 * bucket order, starting when its bucket is ready and the previous one is done. The step ends when the
 * backward and the last all-reduce have. So communication hides behind the backward pass until it is
 * longer than it, and the last bucket's all-reduce (the first layers') is never hidden.
 *
 * @param buckets        bucket sizes in bytes, in the order they become ready
 * @param computeSeconds forward and backward time of one step without communication
 * @param backwardShare  the backward's share of {@code computeSeconds} (2/3: a backward costs about two forwards)
 */
public record StepModel(List<Long> buckets, double computeSeconds, double backwardShare) {
    /** DDP's default bucket cap, 25 MiB; the first bucket (the last layers' gradients) is capped at 1 MiB. */
    public static final long BUCKET_BYTES = 25L << 20;
    public static final long FIRST_BUCKET_BYTES = 1L << 20;
    public static final double BACKWARD_SHARE = 2.0 / 3;

    public StepModel {
        buckets = List.copyOf(buckets);
        if (buckets.isEmpty() || buckets.stream().anyMatch(b -> b <= 0)) {
            throw new IllegalArgumentException("a step needs at least one gradient bucket, each of at least 1 byte: " + buckets);
        }
        if (!(computeSeconds >= 0) || Double.isInfinite(computeSeconds)) {
            throw new IllegalArgumentException("compute time must be a finite number of seconds >= 0, not " + computeSeconds);
        }
        if (!(backwardShare > 0 && backwardShare <= 1)) {
            throw new IllegalArgumentException("the backward's share of the compute time must be in (0, 1], not " + backwardShare);
        }
    }

    /** A model of {@code gradientBytes} of gradients in DDP's default buckets, with the usual backward share. */
    public static StepModel ddp(long gradientBytes, double computeSeconds) {
        return new StepModel(ddpBuckets(gradientBytes), computeSeconds, BACKWARD_SHARE);
    }

    /** DDP's buckets of {@code gradientBytes}: 1 MiB first, then 25 MiB each, the rest in the last. */
    public static List<Long> ddpBuckets(long gradientBytes) {
        if (gradientBytes <= 0) {
            throw new IllegalArgumentException("gradient bytes must be at least 1, not " + gradientBytes);
        }
        List<Long> buckets = new ArrayList<>();
        long left = gradientBytes;
        long cap = FIRST_BUCKET_BYTES;
        while (left > 0) {
            long bucket = Math.min(cap, left);
            buckets.add(bucket);
            left -= bucket;
            cap = BUCKET_BYTES;
        }
        return buckets;
    }

    /** The step's time when one all-reduce of {@code bytes} takes {@code allReduceSeconds.applyAsDouble(bytes)}. */
    public double stepSeconds(LongToDoubleFunction allReduceSeconds) {
        double forward = computeSeconds * (1 - backwardShare);
        double backward = computeSeconds * backwardShare;
        long total = buckets.stream().mapToLong(Long::longValue).sum();
        long produced = 0;
        double lastDone = forward;
        for (long bucket : buckets) {
            produced += bucket;
            double ready = forward + backward * produced / total;
            lastDone = Math.max(ready, lastDone) + allReduceSeconds.applyAsDouble(bucket);
        }
        return Math.max(forward + backward, lastDone);
    }

    /** The share of the step that communication adds to the compute time: 0 when it all hides behind the backward. */
    public double exposedShare(LongToDoubleFunction allReduceSeconds) {
        double step = stepSeconds(allReduceSeconds);
        return step == 0 ? 0 : (step - computeSeconds) / step;
    }

    public long gradientBytes() {
        return buckets.stream().mapToLong(Long::longValue).sum();
    }
}
