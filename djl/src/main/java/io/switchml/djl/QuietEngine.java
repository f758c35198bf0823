package io.switchml.djl;

/**
 * Quiets DJL's start-up logging, noise for a training worker: {@code CudaUtils}'s warning "Failed
 * to detect GPU count" (twice per process wherever a CUDA runtime library is installed without a
 * usable driver; the engine then uses the CPU, as it should) and the engine's INFO lines (platform
 * found, thread counts). It sets slf4j-simple's per-logger levels, each only if the application
 * has not set it: call it first thing in {@code main}, before DJL loads. With another slf4j
 * binding, set the same levels in its configuration instead.
 */
public final class QuietEngine {
    /** slf4j-simple's level for DJL's CUDA probe: {@code error}. */
    public static final String CUDA_PROBE_LEVEL = "org.slf4j.simpleLogger.log.ai.djl.util.cuda.CudaUtils";
    /** slf4j-simple's level for the rest of DJL: {@code warn}. */
    public static final String DJL_LEVEL = "org.slf4j.simpleLogger.log.ai.djl";

    private QuietEngine() {
    }

    public static void apply() {
        setIfAbsent(CUDA_PROBE_LEVEL, "error");
        setIfAbsent(DJL_LEVEL, "warn");
    }

    private static void setIfAbsent(String property, String level) {
        if (System.getProperty(property) == null) {
            System.setProperty(property, level);
        }
    }
}
