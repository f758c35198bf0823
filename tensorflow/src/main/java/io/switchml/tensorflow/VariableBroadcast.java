package io.switchml.tensorflow;

import io.switchml.api.AllReduce;
import io.switchml.api.ReduceOp;
import io.switchml.api.TensorLayout;
import org.tensorflow.Graph;
import org.tensorflow.Operand;
import org.tensorflow.Output;
import org.tensorflow.Result;
import org.tensorflow.Session;
import org.tensorflow.op.Op;
import org.tensorflow.op.Ops;
import org.tensorflow.types.TInt32;
import org.tensorflow.types.family.TType;

import java.nio.IntBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Gives every worker rank {@code root}'s variables, bit for bit, as Horovod's
 * {@code BroadcastGlobalVariables} does, so data-parallel training starts from one state whatever
 * each process's random initialization was. It runs through the same all-reduce as the gradients:
 * {@code root} contributes its variables' raw bits as int32, every other worker zeros, and an
 * integer sum of one value and zeros is that value exactly, on the switch as on the baselines.
 * Every variable of the graph goes (the optimizer's slots too: Horovod's global variables).
 */
public final class VariableBroadcast {
    private VariableBroadcast() {
    }

    /** Call on every worker after the session initialized the variables and before the first step. */
    public static void fromRank(AllReduce allReduce, Session session, int root) {
        fromRank(allReduce, session, root, DistributedOptimizer.DEFAULT_BUCKET_BYTES);
    }

    public static void fromRank(AllReduce allReduce, Session session, int root, long bucketBytes) {
        if (root < 0 || root >= allReduce.workers()) {
            throw new IllegalArgumentException("root rank " + root + " outside 0.." + (allReduce.workers() - 1));
        }
        Graph graph = session.graph();
        List<Output<?>> variables = GraphVariables.all(graph);
        TensorLayout layout = GraphVariables.layout(variables, true);
        layout.requireSameOnAllRanks(allReduce, "variables");
        Ops tf = Ops.create(graph).withSubScope("switchml_broadcast");
        List<Operand<TInt32>> bits = new ArrayList<>();
        for (Output<?> v : variables) {
            bits.add(tf.bitcast(v, TInt32.class));
        }
        try (Fused<TInt32> fused = new Fused<>(tf, layout, bits, variables.stream().map(Output::shape).toList(), TInt32.class,
                bucketBytes, TInt32::tensorOf)) {
            List<Op> assigns = new ArrayList<>();
            for (int i = 0; i < variables.size(); i++) {
                assigns.add(assign(tf, variables.get(i), fused.unpacked().get(i)));
            }
            boolean isRoot = allReduce.rank() == root;
            Session.Runner packs = session.runner();
            fused.packed().forEach(packs::fetch);
            try (Result own = isRoot ? packs.run() : null) {
                for (int b = 0; b < fused.buckets().size(); b++) {
                    IntBuffer out = TensorMemory.ints(fused.fed().get(b));
                    IntBuffer in = out;
                    if (isRoot) {
                        in = TensorMemory.ints((TInt32) own.get(b));
                    } else {
                        for (int i = 0; i < out.limit(); i++) {
                            out.put(i, 0);
                        }
                    }
                    allReduce.allReduce(in, out, ReduceOp.SUM);
                }
            }
            Session.Runner runner = fused.feed(session.runner());
            assigns.forEach(runner::addTarget);
            runner.run().close();
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Op assign(Ops tf, Output<?> variable, Operand<TInt32> bits) {
        Class<? extends TType> type = variable.type();
        return tf.assign((Operand) variable, (Operand) tf.bitcast(bits, type));
    }
}
