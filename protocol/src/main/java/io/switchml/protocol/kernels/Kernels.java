package io.switchml.protocol.kernels;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.SplittableRandom;
import java.util.function.IntFunction;

/**
 * Which {@link PayloadKernels} this JVM runs, chosen once: the {@code switchml.kernels} system
 * property, else the {@code SWITCHML_KERNELS} variable, else {@code auto}. {@code auto} takes the
 * {@link ArrayKernels}: fast on every JDK from the first packet on. The Vector API's kernels
 * ({@code vector}) are faster on large tensors once the JIT has compiled them, and much slower until
 * then (BENCHMARKS.md section 25: a training run, small tensors and the rack were slower with them), so
 * they are taken only when named; a named implementation must load here and pass a self-check against
 * {@link ScalarKernels} on one block, or the choice fails saying why.
 */
public final class Kernels {
    public static final String PROPERTY = "switchml.kernels";
    public static final String VARIABLE = "SWITCHML_KERNELS";
    public static final String AUTO = "auto";

    /**
     * The kernels chosen and why.
     *
     * @param name    the kernels' name, as the setting spells it
     * @param reason  why these: the setting, or what auto found
     * @param factory makes an instance for packets of at most n elements
     */
    public record Choice(String name, String reason, IntFunction<PayloadKernels> factory) {
        /** New kernels, for one thread, for packets of at most {@code maxElements} elements. */
        public PayloadKernels create(int maxElements) {
            return factory.apply(maxElements);
        }

        /** One line for logs and reports: the name and why. */
        public String describe() {
            return name + " (" + reason + ")";
        }
    }

    private static volatile Choice selected;

    private Kernels() {
    }

    /** This JVM's kernels, chosen on first use from the setting. */
    public static Choice selected() {
        Choice choice = selected;
        if (choice == null) {
            synchronized (Kernels.class) {
                choice = selected;
                if (choice == null) {
                    selected = choice = choose(setting());
                }
            }
        }
        return choice;
    }

    /** This JVM's kernels and JDK in a word, as reports show them: {@code vector/jdk25}. */
    public static String label() {
        return selected().name() + "/jdk" + Runtime.version().feature();
    }

    /** New kernels of this JVM's choice for packets of at most {@code maxElements} elements. */
    public static PayloadKernels create(int maxElements) {
        return selected().create(maxElements);
    }

    /** The setting as given: the system property, else the variable, else auto. */
    public static String setting() {
        String value = System.getProperty(PROPERTY);
        if (value == null || value.isBlank()) {
            value = System.getenv(VARIABLE);
        }
        return value == null || value.isBlank() ? AUTO : value.trim().toLowerCase(Locale.ROOT);
    }

    /** The names the setting takes. */
    public static List<String> names() {
        List<String> names = new ArrayList<>(List.of(AUTO, ScalarKernels.NAME, ArrayKernels.NAME));
        providers().forEach(p -> names.add(p.name()));
        return names;
    }

    /**
     * The kernels a setting names. {@code auto} never fails; a name fails with an
     * {@link IllegalArgumentException} that says why those kernels cannot run here.
     */
    public static Choice choose(String setting) {
        String name = setting.trim().toLowerCase(Locale.ROOT);
        if (name.equals(ScalarKernels.NAME)) {
            return new Choice(name, "set", n -> new ScalarKernels());
        }
        if (name.equals(ArrayKernels.NAME)) {
            return new Choice(name, "set", ArrayKernels::new);
        }
        if (name.equals(AUTO)) {
            return new Choice(ArrayKernels.NAME, "auto", ArrayKernels::new);
        }
        for (KernelProvider provider : providers()) {
            if (name.equals(provider.name())) {
                String why = provider.unavailableReason();
                if (why == null) {
                    why = selfCheck(provider.create(SELF_CHECK_ELEMENTS));
                }
                if (why != null) {
                    throw new IllegalArgumentException("kernels=" + name + " cannot run in this JVM: " + why);
                }
                return new Choice(provider.name(), "set", provider::create);
            }
        }
        throw new IllegalArgumentException("unknown kernels '" + setting + "'; " + PROPERTY + " (or " + VARIABLE
                + ") takes one of " + names());
    }

    private static List<KernelProvider> providers() {
        List<KernelProvider> providers = new ArrayList<>();
        try {
            for (KernelProvider provider : ServiceLoader.load(KernelProvider.class, Kernels.class.getClassLoader())) {
                providers.add(provider);
            }
        } catch (ServiceConfigurationError | LinkageError e) {
            // A provider that cannot load here is one this JVM does not have.
        }
        return providers;
    }

    private static final int SELF_CHECK_ELEMENTS = 1031;

    /**
     * Runs every kernel on one block of ordinary and edge values against {@link ScalarKernels}; null
     * when they agree, else what differed. Guards against an implementation that a JVM compiles wrongly.
     */
    static String selfCheck(PayloadKernels candidate) {
        try {
            return firstDifference(candidate, new ScalarKernels(), SELF_CHECK_ELEMENTS, 7, new SplittableRandom(20211));
        } catch (RuntimeException | LinkageError e) {
            return "its self-check failed: " + e;
        }
    }

    /** Compares two kernels on one random block of n elements at byte offset {@code at}; null when equal. */
    static String firstDifference(PayloadKernels a, PayloadKernels b, int n, int at, SplittableRandom random) {
        float[] values = new float[n];
        int[] ints = new int[n];
        for (int i = 0; i < n; i++) {
            values[i] = (float) (random.nextGaussian() * Math.scalb(1.0, random.nextInt(-30, 30)));
            ints[i] = random.nextInt();
        }
        values[0] = 0f;
        values[n - 1] = -values[n - 1];
        int maxBits = b.maxMagnitudeBits(values, 0, n);
        if (a.maxMagnitudeBits(values, 0, n) != maxBits) {
            return "maxMagnitudeBits";
        }
        double scale = io.switchml.protocol.BlockQuantizer.scale(io.switchml.protocol.BlockQuantizer.exponent(maxBits), 3);
        ByteBuffer x = ByteBuffer.allocate(at + n * Integer.BYTES);
        ByteBuffer y = ByteBuffer.allocateDirect(at + n * Integer.BYTES);
        a.quantize(values, 0, n, scale, x, at);
        b.quantize(values, 0, n, scale, y, at);
        if (!x.equals(y)) {
            return "quantize";
        }
        a.storeInts(ints, 0, n, x, at);
        b.storeInts(ints, 0, n, y, at);
        if (!x.equals(y)) {
            return "storeInts";
        }
        float[] outA = new float[n];
        float[] outB = new float[n];
        a.dequantize(x, at, n, 1 / scale, outA, 0);
        b.dequantize(y, at, n, 1 / scale, outB, 0);
        if (!Arrays.equals(outA, outB)) {
            return "dequantize";
        }
        int[] sumsA = ints.clone();
        int[] sumsB = ints.clone();
        a.addInts(x, at, n, sumsA);
        b.addInts(y, at, n, sumsB);
        if (!Arrays.equals(sumsA, sumsB)) {
            return "addInts";
        }
        a.quantizeBits(ints, 0, n, 1.0, sumsA, false);
        b.quantizeBits(ints, 0, n, 1.0, sumsB, false);
        return Arrays.equals(sumsA, sumsB) ? null : "quantizeBits";
    }
}
