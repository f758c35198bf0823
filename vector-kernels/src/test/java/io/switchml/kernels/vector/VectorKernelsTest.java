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
        return VectorKernels.vectorOnly(maxElements);
    }

    @Example
    void theWarmUpEndsAndThenEveryInstanceRunsTheVectorCode() throws InterruptedException {
        PayloadKernels kernels = new VectorKernels(256);
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while (!VectorKernels.warm() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(VectorKernels.warm()).as("warm within 60 s").isTrue();
        float[] values = {1.5f, -2.25f, 3e-3f};
        java.nio.ByteBuffer packet = java.nio.ByteBuffer.allocate(22);
        kernels.quantize(values, 0, 3, 1024.0, packet, 10);
        assertThat(packet.getInt(10)).isEqualTo(1536);
        assertThat(packet.getInt(14)).isEqualTo(-2304);
        assertThat(packet.getInt(18)).isEqualTo(3);
    }

    @Example
    void autoChoosesTheVectorKernelsWhereTheModuleIsPresent() {
        assertThat(new VectorKernelProvider().unavailableReason()).isNull();
        assertThat(Kernels.choose("auto").name()).isEqualTo("vector");
        assertThat(Kernels.choose("vector").reason()).isEqualTo("set");
    }
}
