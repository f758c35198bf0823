package io.switchml.launch;

/**
 * A JVM's whole work in {@link AotCacheTest}: a loop worth profiling, one line on standard output. With arguments
 * {@code serve LINE} it prints {@code LINE} after the loop and waits to be stopped, as a switch does
 * ({@link RackSwitchTest}).
 */
public final class AotProbe {
    private AotProbe() {
    }

    public static void main(String[] args) throws InterruptedException {
        long sum = 0;
        for (int i = 0; i < 20_000_000; i++) {
            sum += i % 7;
        }
        System.out.println("probe " + sum);
        if (args.length == 2 && args[0].equals("serve")) {
            System.out.println(args[1]);
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
