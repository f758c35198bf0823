package io.switchml.training;

import io.switchml.api.AllReduce;
import io.switchml.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Every rank's text at every rank, through the job's own all-reduce: an all-gather as an int32 sum in
 * which each rank fills only its own part and leaves the others zero, so the sum is every part exactly,
 * on the switch as on the ring. How ranks on several hosts learn each other's reports without a
 * channel of their own (the multi-host {@code train} summary).
 */
final class ReportGather {
    private ReportGather() {
    }

    /** {@code mine} from every rank, in rank order; every rank calls it, with its own text. */
    static List<String> allGather(AllReduce allReduce, int rank, int workers, String mine) {
        byte[] bytes = mine.getBytes(StandardCharsets.UTF_8);
        int[] lengths = new int[workers];
        lengths[rank] = bytes.length;
        allReduce.allReduce(lengths, ReduceOp.SUM);
        int[] offsets = new int[workers + 1]; // in ints, each rank's part padded to whole ints
        for (int r = 0; r < workers; r++) {
            offsets[r + 1] = offsets[r] + (lengths[r] + 3) / 4;
        }
        int[] packed = new int[Math.max(1, offsets[workers])];
        ByteBuffer padded = ByteBuffer.allocate((offsets[rank + 1] - offsets[rank]) * 4).put(bytes).rewind();
        padded.asIntBuffer().get(packed, offsets[rank], offsets[rank + 1] - offsets[rank]);
        allReduce.allReduce(packed, ReduceOp.SUM);
        List<String> all = new ArrayList<>(workers);
        ByteBuffer sums = ByteBuffer.allocate(packed.length * 4);
        sums.asIntBuffer().put(packed);
        for (int r = 0; r < workers; r++) {
            all.add(new String(sums.array(), offsets[r] * 4, lengths[r], StandardCharsets.UTF_8));
        }
        return all;
    }
}
