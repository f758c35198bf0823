package io.switchml.launch;

import io.switchml.api.ReduceOp;
import io.switchml.api.ReferenceAllReduce;
import io.switchml.client.HostLayout;
import io.switchml.collectives.Compression;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class HostExactSumTest {
    /** Block by block, it is the reference's result for hosts of several ranks, bit for bit. */
    @ParameterizedTest
    @ValueSource(strings = {"2,0/1", "0,1,2", "1/0,2"})
    void isTheReferencesHostResult(String text) {
        int ranks = 3;
        int length = 1000;
        HostLayout layout = HostLayout.parse(text, ranks);
        Random random = new Random(7);
        float[][] byRank = new float[ranks][length];
        for (float[] tensor : byRank) {
            for (int i = 0; i < length; i++) {
                tensor[i] = (float) (random.nextGaussian() * Math.pow(2, random.nextInt(30) - 15));
            }
        }
        float[][][] byHost = new float[layout.hostCount()][][];
        for (int h = 0; h < byHost.length; h++) {
            byHost[h] = layout.ranksOf(h).stream().map(r -> byRank[r]).toArray(float[][]::new);
        }
        float[] expected = ReferenceAllReduce.hostFloats(byHost, 256, ReduceOp.SUM);
        ExactSum.Blockwise exact = (ExactSum.Blockwise) HostExactSum.of(AllReduceAlgorithm.switchMl(),
                new ExactSum.Context(ranks, 256, 32, Compression.DEFAULTS, 1), layout);
        float[] result = new float[length];
        int block = exact.blockElements();
        float[][] blocks = new float[ranks][block];
        float[] out = new float[block];
        for (int from = 0; from < length; from += block) {
            int count = Math.min(block, length - from);
            for (int r = 0; r < ranks; r++) {
                System.arraycopy(byRank[r], from, blocks[r], 0, count);
            }
            exact.sum().expected(blocks, from, count, length, out);
            System.arraycopy(out, 0, result, from, count);
        }
        assertThat(result).isEqualTo(expected);
    }
}
