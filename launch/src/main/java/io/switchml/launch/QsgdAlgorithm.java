package io.switchml.launch;

import io.switchml.collectives.Algorithm;
import io.switchml.collectives.Compression;
import io.switchml.collectives.QsgdReference;

import java.util.Arrays;

/** {@code qsgd}: each worker sends its gradient stochastically quantized (QSGD), all-gathered around the ring. */
public final class QsgdAlgorithm extends TcpBaseline {
    public QsgdAlgorithm() {
        super(Algorithm.QSGD);
    }

    @Override
    public String summary() {
        return "QSGD stochastic quantization, all-gathered around the ring over TCP, no switch";
    }

    /** Quantized per bucket (blocks of whole buckets) at the last round's step, summed in rank order. */
    @Override
    public ExactSum exactSum(ExactSum.Context context) {
        Compression compression = context.compression();
        int workers = context.workers();
        long step = context.rounds() - 1;
        int d = compression.bucket();
        int block = d >= ExactSum.DEFAULT_BLOCK ? d : d * ((ExactSum.DEFAULT_BLOCK + d - 1) / d);
        float[][] quantized = new float[1][];
        return new ExactSum.Blockwise(block, (blocks, from, count, length, out) -> {
            if (quantized[0] == null || quantized[0].length < count) {
                quantized[0] = new float[count];
            }
            float[] q = quantized[0];
            Arrays.fill(out, 0, count, 0f);
            for (int r = 0; r < workers; r++) {
                QsgdReference.quantize(blocks[r], from, count, r, step, compression, q);
                for (int i = 0; i < count; i++) {
                    out[i] = out[i] + q[i];
                }
            }
        });
    }
}
