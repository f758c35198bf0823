package io.switchml.protocol.kernels;

/** {@link ArrayKernels} keep the kernels' contract. */
class ArrayKernelsTest extends PayloadKernelsContract {
    @Override
    protected PayloadKernels kernels(int maxElements) {
        return new ArrayKernels(maxElements);
    }
}
