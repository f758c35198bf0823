package io.switchml.kernels.vector;

import io.switchml.protocol.kernels.KernelProvider;
import io.switchml.protocol.kernels.PayloadKernels;

/**
 * Offers {@link VectorKernels} where the JVM has the Vector API: started with
 * {@code --add-modules jdk.incubator.vector}, as the project's own launchers start theirs. This class
 * names no Vector API type, so it loads in every JVM.
 */
public final class VectorKernelProvider implements KernelProvider {
    static final String MODULE = "jdk.incubator.vector";

    @Override
    public String name() {
        return VectorKernels.NAME;
    }

    @Override
    public String unavailableReason() {
        if (ModuleLayer.boot().findModule(MODULE).isEmpty()) {
            return "the JVM was started without --add-modules " + MODULE;
        }
        return VectorKernels.unsupportedReason();
    }

    @Override
    public PayloadKernels create(int maxElements) {
        return new VectorKernels(maxElements);
    }
}
