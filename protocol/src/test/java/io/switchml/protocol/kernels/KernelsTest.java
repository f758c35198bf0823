package io.switchml.protocol.kernels;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class KernelsTest {
    @Test
    void namedKernelsAreTakenAsNamed() {
        assertThat(Kernels.choose("scalar").create(8)).isInstanceOf(ScalarKernels.class);
        assertThat(Kernels.choose(" Array ").create(8)).isInstanceOf(ArrayKernels.class);
    }

    @Test
    void anUnknownNameIsRefusedWithTheNamesThatExist() {
        assertThatThrownBy(() -> Kernels.choose("simd"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown kernels 'simd'")
                .hasMessageContaining("auto").hasMessageContaining("scalar").hasMessageContaining("array");
    }

    @Test
    void autoTakesTheArrayKernels() {
        Kernels.Choice choice = Kernels.choose("auto");
        assertThat(choice.name()).isEqualTo("array");
        assertThat(choice.create(16)).isInstanceOf(ArrayKernels.class);
        assertThat(choice.describe()).isEqualTo("array (auto)");
    }

    @Test
    void namedKernelsThatAreNotOnTheClassPathAreRefusedSayingWhich() {
        // The protocol module alone has no vector kernels: its tests run without the vector-kernels module.
        assertThatThrownBy(() -> Kernels.choose("vector")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("unknown kernels 'vector'");
    }

    @Test
    void theSelfCheckCatchesKernelsThatDisagreeWithTheReference() {
        PayloadKernels right = new ArrayKernels(2048);
        // Array kernels but for an add that skips the last element.
        PayloadKernels wrong = (PayloadKernels) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {PayloadKernels.class}, (proxy, method, args) -> {
                    if (method.getName().equals("addInts")) {
                        args[2] = (int) args[2] - 1;
                    }
                    return method.invoke(right, args);
                });
        assertThat(Kernels.selfCheck(new ArrayKernels(2048))).isNull();
        assertThat(Kernels.selfCheck(wrong)).isEqualTo("addInts");
        assertThat(Kernels.firstDifference(new ArrayKernels(64), new ScalarKernels(), 64, 3, new SplittableRandom(1))).isNull();
    }
}
