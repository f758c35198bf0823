package io.switchml.protocol.kernels;

/** {@link ArrayKernels} quantising with {@code Math.rint}, as on JDK 21 and later, keep the contract on any JDK. */
class ArrayKernelsByRintTest extends PayloadKernelsContract {
    @Override
    protected PayloadKernels kernels(int maxElements) {
        return new ArrayKernels(maxElements, true);
    }
}
