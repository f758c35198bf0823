package io.switchml.jmh;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import org.junit.jupiter.api.Test;

import java.nio.FloatBuffer;

import static org.assertj.core.api.Assertions.assertThat;

/** The allocation benchmark's all-reduce really runs through the switch and gets the exact result. */
class AllReduceAllocationBenchmarkTest {
    /** SwitchMLConfig's default, which the benchmark's cluster uses. */
    private static final int ELEMENTS_PER_PACKET = 2048;

    @Test
    void everyWorkerGetsTheExactSumEveryTime() {
        AllReduceAllocationBenchmark bench = new AllReduceAllocationBenchmark();
        bench.tensorBytes = 256 * 1024; // smaller than the benchmark's sizes: the same path, a quicker test
        bench.setUp();
        try {
            int elements = bench.tensorBytes / Float.BYTES;
            float[][] inputs = new float[AllReduceAllocationBenchmark.WORKERS][];
            for (int rank = 0; rank < inputs.length; rank++) {
                inputs[rank] = bench.inputs[rank].array();
                assertThat(inputs[rank]).hasSize(elements);
            }
            float[] expected = ReferenceAllReduce.floats(inputs, ELEMENTS_PER_PACKET, ReduceOp.SUM);

            for (int invocation = 0; invocation < 3; invocation++) {
                FloatBuffer[] outputs = bench.allReduce();
                for (FloatBuffer output : outputs) {
                    assertThat(output.array()).as("invocation %d", invocation).isEqualTo(expected);
                    output.clear();
                    output.put(new float[elements]); // so the next invocation must write every element again
                    output.clear();
                }
            }
        } finally {
            bench.tearDown();
        }
    }
}
