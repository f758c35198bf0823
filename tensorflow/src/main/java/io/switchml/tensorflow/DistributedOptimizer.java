package io.switchml.tensorflow;

import io.switchml.api.AllReduce;
import io.switchml.api.FusedMean;
import io.switchml.api.StepCountMismatchException;
import io.switchml.api.TensorLayout;
import io.switchml.api.UnevenInputs;
import org.tensorflow.GraphOperation;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.Result;
import org.tensorflow.Session;
import org.tensorflow.framework.optimizers.Optimizer;
import org.tensorflow.op.Op;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.family.TType;

import java.nio.FloatBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.Set;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

/**
 * Makes a TensorFlow Java training graph data-parallel over any {@link AllReduce}, in the shape of
 * Horovod's {@code DistributedOptimizer}: TensorFlow computes the gradients, they are fused into
 * buckets, averaged over the workers through the all-reduce, and applied by the wrapped TensorFlow
 * optimizer, so every worker applies the same update and the variables stay bit-identical.
 *
 * <p>TensorFlow Java has no op that calls back into Java in the middle of a graph, so a step is two
 * session runs: {@link #step} runs forward and backward (fetching the caller's tensors and the
 * fused gradients), averages the gradients, then runs the optimizer's update fed with the averages.
 * The gradients are packed by TensorFlow (concat, in the graph) and the all-reduce reads the fetched
 * tensors' memory and writes the fed ones' in place ({@link TensorMemory}): no copy in Java.
 *
 * <p>With one device per worker and a batch-mean loss, the mean over workers is the gradient of the
 * mean loss over the global batch. Workers must start from the same variables
 * ({@link VariableBroadcast}); the first step checks that every worker has the same trainable
 * variables (names and shapes, in order).
 *
 * <p><b>Steps per rank.</b> As with DJL ({@link UnevenInputs}): every step begins with a two-int
 * agreement, submitted with the gradients. By default every rank must run the same number of steps;
 * at the end of an epoch call {@link #finish()}, which fails with {@link StepCountMismatchException}
 * on every rank when one still has data. A rank that ran out may instead {@link #join} the others'
 * remaining steps with zero gradients.
 *
 * <p>One per model and worker; not thread-safe. Build it ({@link #minimize}) before the session
 * initializes the variables, since the optimizer adds its own (Adam's moments).
 */
public final class DistributedOptimizer implements AutoCloseable {
    /** Default bucket size: large enough that per-operation costs vanish, small enough to pipeline buckets. */
    public static final long DEFAULT_BUCKET_BYTES = 8L << 20;

    private final AllReduce allReduce;
    private final Optimizer optimizer;
    private final long bucketBytes;
    private final UnevenInputs uneven;
    private TensorLayout layout;
    private List<Output<?>> variables;
    private Fused<TFloat32> fused;
    private List<FloatBuffer> averaged;
    private Op update;
    /** The update's variable updates (what reads the averaged gradients), then the optimizer's own bookkeeping. */
    private List<GraphOperation> variableUpdates;
    private List<GraphOperation> bookkeeping;
    private boolean agreed;
    private long steps;
    private long aggregationNanos;

    public DistributedOptimizer(AllReduce allReduce, Optimizer optimizer) {
        this(allReduce, optimizer, DEFAULT_BUCKET_BYTES);
    }

    /** @param bucketBytes the fusion threshold: gradients are aggregated in buckets of at most this many bytes */
    public DistributedOptimizer(AllReduce allReduce, Optimizer optimizer, long bucketBytes) {
        this.allReduce = allReduce;
        this.optimizer = optimizer;
        this.bucketBytes = bucketBytes;
        this.uneven = new UnevenInputs(allReduce);
    }

    /**
     * Adds to the optimizer's graph the gradients of {@code loss} with respect to every float32 variable it
     * depends on, their fusion, and the optimizer's update fed with the averaged gradients; returns the
     * update (which {@link #step} runs). Call once, before the session initializes the variables.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public Op minimize(Operand<?> loss) {
        if (update != null) {
            throw new IllegalStateException("minimize was called already: one DistributedOptimizer per loss");
        }
        List<Output<?>> vars = new ArrayList<>();
        List<Operand<TFloat32>> gradients = new ArrayList<>();
        for (Optimizer.GradAndVar<?> g : optimizer.computeGradients(loss)) {
            if (g.getGradient() == null) {
                continue; // the loss does not depend on it, as Horovod skips a None gradient
            }
            vars.add(g.getVariable());
            gradients.add((Operand<TFloat32>) (Operand) g.getGradient());
        }
        if (vars.isEmpty()) {
            throw new IllegalArgumentException("the loss depends on no variable: nothing to train");
        }
        TensorLayout trainable = GraphVariables.layout(vars, false);
        Ops tf = optimizer.getTF().withSubScope("switchml");
        Fused<TFloat32> f = new Fused<>(tf, trainable, gradients, vars.stream().map(Output::shape).toList(), TFloat32.class,
                bucketBytes, TFloat32::tensorOf);
        List<Optimizer.GradAndVar<? extends TType>> averages = new ArrayList<>();
        for (int i = 0; i < vars.size(); i++) {
            averages.add(new Optimizer.GradAndVar(f.unpacked().get(i).asOutput(), vars.get(i)));
        }
        this.update = optimizer.applyGradients(averages, "switchml_update");
        splitUpdate(f);
        this.layout = trainable;
        this.variables = List.copyOf(vars);
        this.fused = f;
        this.averaged = f.fed().stream().map(TensorMemory::floats).toList();
        return update;
    }

    /**
     * One training step: runs the graph with {@code feeds} (the batch) fetching {@code fetches} and the
     * gradients, averages the gradients over the workers, and applies them. Returns the first run's
     * result, whose first {@code fetches.length} tensors are the caller's (close it).
     */
    public Result step(Session session, Consumer<Session.Runner> feeds, Operand<?>... fetches) {
        requireBuilt();
        agreeOnce();
        Session.Runner runner = session.runner();
        feeds.accept(runner);
        for (Operand<?> f : fetches) {
            runner.fetch(f);
        }
        fused.packed().forEach(runner::fetch);
        Result result = runner.run();
        try {
            long start = System.nanoTime();
            List<FloatBuffer> gradients = new ArrayList<>(averaged.size());
            for (int b = 0; b < averaged.size(); b++) {
                gradients.add(TensorMemory.floats((TFloat32) result.get(fetches.length + b)));
            }
            // The step's agreement goes first and the buckets right behind it, without waiting for it.
            FusedMean.average(allReduce, gradients, averaged, uneven.stepAsync(), b -> { }, b -> { });
            aggregationNanos += System.nanoTime() - start;
            apply(session);
            steps++;
            return result;
        } catch (RuntimeException e) {
            result.close();
            throw e;
        }
    }

    /**
     * Every rank must end here, at the same step (an epoch's end); fails on every rank with
     * {@link StepCountMismatchException} when one still has data.
     */
    public void finish() {
        uneven.finish();
    }

    /**
     * This rank has run out of data: until every rank has, it takes part in the others' steps with
     * zero gradients and applies their mean as they do. Returns the steps it shadowed.
     */
    public long join(Session session) {
        requireBuilt();
        agreeOnce();
        return uneven.join(training -> {
            for (FloatBuffer bucket : averaged) {
                for (int i = 0; i < bucket.limit(); i++) {
                    bucket.put(i, 0f);
                }
            }
            FusedMean.average(allReduce, averaged, averaged, CompletableFuture.completedFuture(training), b -> { }, b -> { });
            apply(session);
        });
    }

    /**
     * TensorFlow Java's optimizers group their variable updates and their own state's updates (Adam's
     * beta powers, which the variable updates read) under one op with no order between them (in
     * 1.1.0): the variables then depend on which ran first, and workers applying the same averaged
     * gradients could end with different variables. So the update runs in two session runs: the
     * ops that read the gradients, then the rest.
     */
    private void splitUpdate(Fused<TFloat32> f) {
        Set<GraphOperation> downstream = new HashSet<>();
        Deque<GraphOperation> next = new ArrayDeque<>();
        f.placeholders().forEach(p -> next.add((GraphOperation) p.op()));
        while (!next.isEmpty()) {
            GraphOperation op = next.pop();
            if (downstream.add(op)) {
                next.addAll(op.consumers());
            }
        }
        GraphOperation group = (GraphOperation) update.op();
        variableUpdates = new ArrayList<>();
        bookkeeping = new ArrayList<>();
        for (GraphOperation op : group.controlInputs()) {
            (downstream.contains(op) ? variableUpdates : bookkeeping).add(op);
        }
        if (variableUpdates.isEmpty()) {
            variableUpdates.add(group); // not a group: the update is the op itself
            bookkeeping.clear();
        }
    }

    private void apply(Session session) {
        Session.Runner first = fused.feed(session.runner());
        variableUpdates.forEach(first::addTarget);
        first.run().close();
        if (!bookkeeping.isEmpty()) {
            Session.Runner then = session.runner();
            bookkeeping.forEach(then::addTarget);
            then.run().close();
        }
    }

    private void agreeOnce() {
        if (!agreed) {
            layout.requireSameOnAllRanks(allReduce, "trainable variables");
            agreed = true;
        }
    }

    private void requireBuilt() {
        if (update == null) {
            throw new IllegalStateException("call minimize(loss) before the first step");
        }
    }

    /** The trainable variables, in the layout's order. */
    public List<Output<?>> variables() {
        requireBuilt();
        return variables;
    }

    /** A checksum of the trainable variables' values: equal on workers whose variables are bit-identical. */
    public long checksum(Session session) {
        return GraphVariables.checksum(session, variables());
    }

    /** Steps trained so far (shadowed steps of {@link #join} not counted). */
    public long steps() {
        return steps;
    }

    /** Time spent averaging gradients (the all-reduces and the wait for them). */
    public long aggregationNanos() {
        return aggregationNanos;
    }

    /** Bytes of gradient each step aggregates; 0 before {@link #minimize}. */
    public long bytesPerStep() {
        return layout == null ? 0 : layout.totalBytes();
    }

    /** Frees the tensors the averaged gradients are written into. */
    @Override
    public void close() {
        if (fused != null) {
            fused.close();
        }
    }
}
