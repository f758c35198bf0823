package io.switchml.protocol.kernels;

/**
 * Kernels that need more than JDK 17 gives every JVM (the Vector API's incubator module, a newer
 * JDK), found with {@link java.util.ServiceLoader} so that the protocol module loads anywhere. A
 * provider's own class must load on every JVM; it touches what it needs only in {@link #create}.
 */
public interface KernelProvider {
    /** The name the {@code kernels} setting uses for these kernels. */
    String name();

    /** Why these kernels cannot run in this JVM, or null when they can. */
    String unavailableReason();

    /** Kernels for packets of at most {@code maxElements} elements. */
    PayloadKernels create(int maxElements);
}
