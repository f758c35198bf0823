package io.switchml.launch;

import io.switchml.api.ReferenceAllReduce;
import io.switchml.client.HostLayout;

import java.util.List;

/**
 * The exact float32 SUM of ranks that share hosts (docs/ARCHITECTURE.md section 16), for the bench's verifier: each
 * host's ranks are summed there in float32, in the layout's order, and the algorithm runs over the hosts' sums, one
 * contribution per host; a job of one host has nothing to add to its sum, which is the result. It is what
 * {@code ReferenceAllReduce.hostFloats} computes, block by block.
 */
public final class HostExactSum {
    private HostExactSum() {
    }

    /**
     * @param algorithm an algorithm that sums exactly (not a compressing one) with a blockwise exact sum
     * @param context   the connection's context, its workers the launch's ranks
     */
    public static ExactSum of(AllReduceAlgorithm algorithm, ExactSum.Context context, HostLayout layout) {
        int hosts = layout.hostCount();
        ExactSum.Blockwise overHosts = null;
        if (hosts > 1) {
            ExactSum exact = algorithm.exactSum(new ExactSum.Context(hosts, context.elementsPerPacket(), context.laneBits(),
                    context.compression(), context.rounds()));
            if (!(exact instanceof ExactSum.Blockwise blockwise)) {
                throw new IllegalArgumentException(algorithm.id() + "'s exact sum spans whole tensors; hosts of several ranks"
                        + " sum exactly only with algorithms that round block by block");
            }
            overHosts = blockwise;
        }
        ExactSum.Blockwise inner = overHosts;
        int blockElements = inner == null ? ExactSum.DEFAULT_BLOCK : inner.blockElements();
        float[][] hostBlocks = new float[hosts][blockElements];
        float[][][] localBlocks = new float[hosts][][];
        for (int h = 0; h < hosts; h++) {
            localBlocks[h] = new float[layout.ranksOf(h).size()][];
        }
        return new ExactSum.Blockwise(blockElements, (blockByRank, from, count, length, out) -> {
            for (int h = 0; h < hosts; h++) {
                List<Integer> ranks = layout.ranksOf(h);
                for (int l = 0; l < ranks.size(); l++) {
                    localBlocks[h][l] = blockByRank[ranks.get(l)];
                }
                ReferenceAllReduce.hostSum(localBlocks[h], count, hostBlocks[h]);
            }
            if (inner == null) {
                System.arraycopy(hostBlocks[0], 0, out, 0, count);
            } else {
                inner.sum().expected(hostBlocks, from, count, length, out);
            }
        });
    }
}
