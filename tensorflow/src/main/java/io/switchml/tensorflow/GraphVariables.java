package io.switchml.tensorflow;

import io.switchml.api.TensorLayout;
import org.tensorflow.Graph;
import org.tensorflow.GraphOperation;
import org.tensorflow.Output;
import org.tensorflow.Session;
import org.tensorflow.Tensor;
import org.tensorflow.types.TFloat32;
import org.tensorflow.types.TInt32;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * A graph's variables ({@code VariableV2} operations, the kind {@code Ops.variable} makes and
 * TensorFlow Java's optimizers find) in graph order, which is the order the program built them in:
 * the same on every worker that runs the same program. Their layout names them by operation name.
 */
public final class GraphVariables {
    static final String VARIABLE = "VariableV2";

    private GraphVariables() {
    }

    /** Every variable of the graph, in graph order. */
    public static List<Output<?>> all(Graph graph) {
        List<Output<?>> variables = new ArrayList<>();
        Iterator<GraphOperation> ops = graph.operations();
        while (ops.hasNext()) {
            GraphOperation op = ops.next();
            if (VARIABLE.equals(op.type())) {
                variables.add(op.output(0));
            }
        }
        return variables;
    }

    /** The layout of {@code variables}; each must have a static shape and be float32 (or int32 where {@code int32} allowed). */
    static TensorLayout layout(List<? extends Output<?>> variables, boolean int32) {
        TensorLayout.Builder layout = TensorLayout.builder();
        for (Output<?> v : variables) {
            Class<?> type = v.type();
            if (type != TFloat32.class && !(int32 && type == TInt32.class)) {
                throw new IllegalArgumentException("variable " + v.op().name() + " is " + v.dataType() + "; only float32"
                        + (int32 ? " and int32" : "") + " variables are supported");
            }
            layout.add(v.op().name(), v.shape().asArray());
        }
        return layout.build();
    }

    /** A CRC32C of the variables' values, in order: equal on workers whose variables are bit-identical. */
    public static long checksum(Session session, List<? extends Output<?>> variables) {
        CRC32C crc = new CRC32C();
        for (Output<?> v : variables) {
            try (Tensor value = session.runner().fetch(v).run().get(0)) {
                crc.update(TensorMemory.bytes(value));
            }
        }
        return crc.getValue();
    }
}
