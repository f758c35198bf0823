package io.switchml.djl;

import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;

import java.util.zip.CRC32C;

/** A checksum of a block's parameter values, in block order: equal on workers whose parameters are bit-identical. */
public final class ParameterChecksum {
    private ParameterChecksum() {
    }

    public static long of(Block block) {
        CRC32C crc = new CRC32C();
        for (Pair<String, Parameter> p : block.getParameters()) {
            crc.update(p.getValue().getArray().toByteBuffer(true));
        }
        return crc.getValue();
    }
}
