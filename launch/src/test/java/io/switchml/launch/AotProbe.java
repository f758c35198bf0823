package io.switchml.launch;

/** A JVM's whole work in {@link AotCacheTest}: a loop worth profiling, one line on standard output. */
public final class AotProbe {
    private AotProbe() {
    }

    public static void main(String[] args) {
        long sum = 0;
        for (int i = 0; i < 20_000_000; i++) {
            sum += i % 7;
        }
        System.out.println("probe " + sum);
    }
}
