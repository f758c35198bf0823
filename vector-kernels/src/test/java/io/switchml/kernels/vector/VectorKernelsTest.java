package io.switchml.kernels.vector;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.kernels.Kernels;
import io.switchml.protocol.kernels.PayloadKernels;
import io.switchml.protocol.kernels.PayloadKernelsContract;
import net.jqwik.api.Example;

/** {@link VectorKernels} keep the kernels' contract; the test JVMs run with the Vector API's module. */
class VectorKernelsTest extends PayloadKernelsContract {
    @Override
    protected PayloadKernels kernels(int maxElements) {
        return new VectorKernels(maxElements);
    }

    @Example
    void theVectorKernelsAreTakenWhenNamedAndTheModuleIsPresent() {
        assertThat(new VectorKernelProvider().unavailableReason()).isNull();
        assertThat(Kernels.choose("vector").create(64).name()).isEqualTo("vector");
        assertThat(Kernels.choose("vector").reason()).isEqualTo("set");
        assertThat(Kernels.choose("auto").name()).as("opt-in only").isEqualTo("array");
    }
}
