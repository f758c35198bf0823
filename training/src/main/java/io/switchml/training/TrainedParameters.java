package io.switchml.training;

import ai.djl.MalformedModelException;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Block;
import io.switchml.djl.ParameterChecksum;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;

/**
 * A trained model's parameters as DJL saves them ({@link Block#saveParameters}), with their checksum
 * ({@link ParameterChecksum}): what a rank hands back when training ends. Serializable, so a Spark task can return it.
 *
 * @param checksum   equal on ranks whose parameters are bit-identical
 * @param parameters the block's parameters in DJL's format; load them into a block of the same structure with
 *                   {@link #loadInto}
 */
public record TrainedParameters(long checksum, byte[] parameters) implements Serializable {
    private static final long serialVersionUID = 1L;

    public static TrainedParameters of(Block block) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            block.saveParameters(out);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot save the parameters: " + e.getMessage(), e);
        }
        return new TrainedParameters(ParameterChecksum.of(block), bytes.toByteArray());
    }

    /** Loads the parameters into {@code block} (initialized, of the trained model's structure). */
    public void loadInto(NDManager manager, Block block) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(parameters))) {
            block.loadParameters(manager, in);
        } catch (IOException | MalformedModelException e) {
            throw new IllegalArgumentException("cannot load the parameters into " + block.getClass().getSimpleName() + ": "
                    + e.getMessage(), e);
        }
    }
}
