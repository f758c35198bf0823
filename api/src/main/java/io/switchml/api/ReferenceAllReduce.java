package io.switchml.api;

import io.switchml.protocol.BlockQuantizer;
import io.switchml.protocol.SixteenBitLanes;

import java.nio.FloatBuffer;
import java.util.Arrays;

/**
 * The exact result the switch path produces for one block, computed locally from every worker's
 * block: the same block floating-point scaling, the same integer sum, the same division. Tests and
 * {@code switchml bench --verify} compare results against it bit for bit.
 *
 * <p>Blocks are the {@code elementsPerPacket}-element runs starting at multiples of
 * {@code elementsPerPacket} from the start of the tensor (every worker thread's share starts at
 * such a multiple).
 */
public final class ReferenceAllReduce {
    private ReferenceAllReduce() {
    }

    /** Writes the float32 result of one block, given each rank's values of that block. */
    public static void floatBlock(float[][] blockByRank, int length, ReduceOp op, float[] out) {
        floatBlock(blockByRank, length, op, false, out);
    }

    /**
     * The same in 16-bit lanes ({@link SixteenBitLanes}) where asked: the terms are scaled to
     * {@code floor((2^15 - 1) / n)}, and each value's sum is its lane's, which the headroom keeps exact.
     */
    public static void floatBlock(float[][] blockByRank, int length, ReduceOp op, boolean sixteenBitLanes, float[] out) {
        int n = blockByRank.length;
        int maxBits = 0;
        for (float[] block : blockByRank) {
            maxBits = Math.max(maxBits, BlockQuantizer.maxMagnitudeBits(FloatBuffer.wrap(block), 0, length));
        }
        if (!BlockQuantizer.representable(maxBits)) {
            Arrays.fill(out, 0, length, Float.NaN);
            return;
        }
        int eMax = BlockQuantizer.exponent(maxBits);
        double scale = sixteenBitLanes ? SixteenBitLanes.scale(eMax, n) : BlockQuantizer.scale(eMax, n);
        double divisor = scale * (op == ReduceOp.MEAN ? n : 1);
        for (int i = 0; i < length; i++) {
            int sum = 0;
            for (float[] block : blockByRank) {
                sum += BlockQuantizer.quantize(block[i], scale);
            }
            out[i] = BlockQuantizer.dequantize(sum, divisor);
        }
    }

    /** Writes the int32 result of one block: wrapping sum, or sum / n for MEAN. */
    public static void intBlock(int[][] blockByRank, int length, ReduceOp op, int[] out) {
        int n = blockByRank.length;
        for (int i = 0; i < length; i++) {
            int sum = 0;
            for (int[] block : blockByRank) {
                sum += block[i];
            }
            out[i] = op == ReduceOp.MEAN ? sum / n : sum;
        }
    }

    /** The whole float32 result for tensors held in memory, one per rank. */
    public static float[] floats(float[][] tensorByRank, int elementsPerPacket, ReduceOp op) {
        return floats(tensorByRank, elementsPerPacket, op, false);
    }

    /**
     * The same with 16-bit lanes where asked: then a block is {@code 2 x elementsPerPacket} values, as
     * many as a packet carries.
     */
    public static float[] floats(float[][] tensorByRank, int elementsPerPacket, ReduceOp op, boolean sixteenBitLanes) {
        int valuesPerBlock = sixteenBitLanes ? 2 * elementsPerPacket : elementsPerPacket;
        int n = tensorByRank.length;
        int length = tensorByRank[0].length;
        float[] result = new float[length];
        float[][] blocks = new float[n][valuesPerBlock];
        float[] out = new float[valuesPerBlock];
        for (int from = 0; from < length; from += valuesPerBlock) {
            int len = Math.min(valuesPerBlock, length - from);
            for (int r = 0; r < n; r++) {
                System.arraycopy(tensorByRank[r], from, blocks[r], 0, len);
            }
            floatBlock(blocks, len, op, sixteenBitLanes, out);
            System.arraycopy(out, 0, result, from, len);
        }
        return result;
    }

    /**
     * The float32 result where each host's ranks share one agent, which joins the job as the host's one worker
     * (docs/ARCHITECTURE.md, "Hosts of several ranks"): each host's tensors summed in float32, in its ranks' order
     * ({@code ((a + b) + c)}), the switch path's SUM over the hosts' sums, and for MEAN that sum divided by all the
     * hosts' ranks in float32 (the job's MEAN would divide by its workers, the hosts). With one rank per host it is
     * {@link #floats(float[][], int, ReduceOp)}. With one host the host's float32 sum is the result (MEAN: divided by
     * its ranks): a job of one worker has nothing to add to it, and its agent sends nothing through the switch.
     */
    public static float[] hostFloats(float[][][] tensorByRankByHost, int elementsPerPacket, ReduceOp op) {
        int ranks = 0;
        float[][] hostSums = new float[tensorByRankByHost.length][];
        for (int h = 0; h < hostSums.length; h++) {
            float[][] local = tensorByRankByHost[h];
            ranks += local.length;
            hostSums[h] = new float[local[0].length];
            hostSum(local, local[0].length, hostSums[h]);
        }
        float[] result;
        if (hostSums.length == 1) {
            result = hostSums[0];
        } else if (ranks == hostSums.length) {
            return floats(hostSums, elementsPerPacket, op);
        } else {
            result = floats(hostSums, elementsPerPacket, ReduceOp.SUM);
        }
        if (op == ReduceOp.MEAN && ranks > 1) {
            for (int i = 0; i < result.length; i++) {
                result[i] /= ranks;
            }
        }
        return result;
    }

    /**
     * A host's contribution: its ranks' first {@code count} values summed in float32, left to right in the ranks'
     * order ({@code ((a + b) + c)}), into {@code out}.
     */
    public static void hostSum(float[][] local, int count, float[] out) {
        System.arraycopy(local[0], 0, out, 0, count);
        for (int r = 1; r < local.length; r++) {
            float[] theirs = local[r];
            for (int i = 0; i < count; i++) {
                out[i] += theirs[i];
            }
        }
    }

    /**
     * The int32 result where each host's ranks share one agent: the wrapping sum of every rank's tensor (integer
     * addition does not care how it is grouped), and for MEAN that sum divided by all ranks, as a job of one worker per
     * rank computes it.
     */
    public static int[] hostInts(int[][][] tensorByRankByHost, ReduceOp op) {
        return ints(Arrays.stream(tensorByRankByHost).flatMap(Arrays::stream).toArray(int[][]::new), op);
    }

    /** The whole int32 result for tensors held in memory, one per rank. */
    public static int[] ints(int[][] tensorByRank, ReduceOp op) {
        int length = tensorByRank[0].length;
        int[] result = new int[length];
        intBlock(tensorByRank, length, op, result);
        return result;
    }
}
