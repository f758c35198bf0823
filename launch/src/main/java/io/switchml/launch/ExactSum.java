package io.switchml.launch;

import io.switchml.collectives.Compression;

import java.util.function.IntFunction;

/**
 * How to compute an algorithm's exact float32 SUM from every rank's input, as the bench's verifier does: block
 * by block where the algorithm's rounding depends only on aligned blocks of elements (memory O(block)), or from
 * whole tensors where it spans the tensor (top-k's selection). int32 results need no such description: every
 * correct int32 SUM is the wrapping sum, whatever the order of additions.
 */
public sealed interface ExactSum permits ExactSum.Blockwise, ExactSum.Whole {
    /** Elements per block when an algorithm's rounding does not depend on a block size. */
    int DEFAULT_BLOCK = 4096;

    /**
     * What an exact sum may depend on besides the inputs.
     *
     * @param workers           the job's workers
     * @param elementsPerPacket {@code switchml}: the packet size its connection chose (its unit of block scaling)
     * @param laneBits          {@code switchml}: bits per float32 value on the wire (32, or 16)
     * @param compression       the compressing algorithms' settings
     * @param rounds            all-reduces run on the same tensors, the verified one last (top-k carries residuals
     *                          from one to the next; QSGD's random rounding depends on the step)
     */
    record Context(int workers, int elementsPerPacket, int laneBits, Compression compression, int rounds) {
        public Context {
            if (workers < 1 || rounds < 1) {
                throw new IllegalArgumentException("need at least one worker and one round, got " + workers + " and " + rounds);
            }
        }

        /** The context of the connection a worker opened. */
        public static Context of(WorkerConnection connection, Compression compression, int rounds) {
            return new Context(connection.allReduce().workers(), connection.elementsPerPacket(), connection.laneBits(),
                    compression, rounds);
        }
    }

    /** Exact sums of blocks of {@code blockElements} elements starting at its multiples. */
    record Blockwise(int blockElements, BlockSum sum) implements ExactSum {
        public Blockwise {
            if (blockElements < 1) {
                throw new IllegalArgumentException("a block holds at least one element, not " + blockElements);
            }
        }
    }

    /** Exact sums computed from every rank's whole tensor. */
    record Whole(WholeSum sum) implements ExactSum {
    }

    /** One block's exact sums. */
    @FunctionalInterface
    interface BlockSum {
        /**
         * @param blockByRank every rank's values of elements {@code from .. from+count-1}, at indices 0..count-1
         * @param length      the tensor's length
         * @param out         receives the exact sums, at indices 0..count-1
         */
        void expected(float[][] blockByRank, int from, int count, int length, float[] out);
    }

    /** A whole tensor's exact sums. */
    @FunctionalInterface
    interface WholeSum {
        /** @param inputOfRank a fresh copy of rank r's input tensor of {@code length} elements */
        float[] expected(IntFunction<float[]> inputOfRank, int length);
    }

    /** One element's exact sum, given every rank's value of it. */
    @FunctionalInterface
    interface ElementSum {
        float expected(float[] valueByRank, int index, int length);
    }

    /** An algorithm whose every element is summed on its own (in an order that may depend on its index). */
    static ExactSum perElement(int workers, ElementSum element) {
        float[] values = new float[workers];
        return new Blockwise(DEFAULT_BLOCK, (blocks, from, count, length, out) -> {
            for (int i = 0; i < count; i++) {
                for (int r = 0; r < workers; r++) {
                    values[r] = blocks[r][i];
                }
                out[i] = element.expected(values, from + i, length);
            }
        });
    }
}
