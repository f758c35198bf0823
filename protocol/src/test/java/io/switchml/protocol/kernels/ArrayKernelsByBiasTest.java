package io.switchml.protocol.kernels;

/** {@link ArrayKernels} quantising by adding a rounding bias, as on JDK 17 to 20, keep the contract on any JDK. */
class ArrayKernelsByBiasTest extends PayloadKernelsContract {
    @Override
    protected PayloadKernels kernels(int maxElements) {
        return new ArrayKernels(maxElements, false);
    }
}
