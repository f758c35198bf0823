package io.switchml.djl;

import io.switchml.api.AllReduce;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Checks, before any tensor is summed, that every worker has the same parameters (names and shapes
 * in the same order): rank 0 broadcasts its layout's fingerprint and description, and a worker whose
 * own differs fails with both in the message rather than silently summing unrelated tensors.
 */
final class LayoutAgreement {
    private LayoutAgreement() {
    }

    static void require(AllReduce allReduce, GradientLayout layout, String what) {
        byte[] description = layout.describe().getBytes(StandardCharsets.UTF_8);
        byte[] mine = ByteBuffer.allocate(Long.BYTES + description.length).putLong(layout.fingerprint()).put(description).array();
        byte[] root = allReduce.broadcast(mine, 0);
        long rootFingerprint = ByteBuffer.wrap(root).getLong();
        if (rootFingerprint != layout.fingerprint()) {
            String rootDescription = new String(root, Long.BYTES, root.length - Long.BYTES, StandardCharsets.UTF_8);
            throw new IllegalStateException("rank " + allReduce.rank() + "'s " + what + " differ from rank 0's: here "
                    + layout.describe() + ", at rank 0 " + rootDescription + "; every worker must build the same model");
        }
    }
}
