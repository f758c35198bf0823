package io.switchml.protocol;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * {@link PacketMacBenchmark}'s two loops taken in turns, 100 ms each, in one JVM: the ratio of each pair of turns,
 * and the median over the pairs. On a machine shared with other work, JMH's forks, one after another, meet
 * different loads (their errors were as large as their scores); two turns 100 ms apart meet nearly the same one.
 *
 * <p>{@code java -cp protocol/target/test-classes:protocol/target/classes io.switchml.protocol.PacketMacPairedRun
 * [pairs]}
 */
public final class PacketMacPairedRun {
    private static final long TURN_NANOS = 100_000_000L;
    private static long sink;

    private PacketMacPairedRun() {
    }

    public static void main(String[] args) throws Exception {
        int pairs = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        System.out.println("java " + System.getProperty("java.version") + ", " + pairs + " pairs of turns");
        for (int elements : new int[] {256, 15360}) {
            for (boolean direct : new boolean[] {true, false}) {
                run(elements, direct, pairs);
            }
        }
        if (sink == 42) {
            System.out.println();
        }
    }

    private static void run(int elements, boolean direct, int pairs) throws Exception {
        PacketMac mac = new PacketMac();
        SplittableRandom random = new SplittableRandom(53);
        byte[] digest = new byte[32];
        byte[] salt = new byte[PacketKey.SALT_BYTES];
        random.nextBytes(digest);
        random.nextBytes(salt);
        PacketKey key = PacketKey.derive(digest, salt, PayloadSize.ofElements(elements));
        int length = AggregationPacket.bytesFor(elements);
        ByteBuffer packet = direct ? ByteBuffer.allocateDirect(length + PacketMac.TAG_BYTES) : ByteBuffer.allocate(length + PacketMac.TAG_BYTES);
        for (int i = 0; i < packet.capacity(); i++) {
            packet.put(i, (byte) random.nextInt(256));
        }
        double[] previous = new double[pairs];
        double[] current = new double[pairs];
        double[] ratios = new double[pairs];
        for (int warm = 0; warm < 5; warm++) {
            turn(mac, packet, length, key, true);
            turn(mac, packet, length, key, false);
        }
        for (int p = 0; p < pairs; p++) {
            boolean previousFirst = p % 2 == 0;
            double a = turn(mac, packet, length, key, previousFirst);
            double b = turn(mac, packet, length, key, !previousFirst);
            previous[p] = previousFirst ? a : b;
            current[p] = previousFirst ? b : a;
            ratios[p] = current[p] / previous[p];
        }
        System.out.printf("%5d elements, %-6s: previous %.2f GB/s, current %.2f GB/s (medians); current / previous rate:"
                        + " median %.2f, p10 %.2f, p90 %.2f%n", elements, direct ? "direct" : "heap",
                median(previous), median(current), median(ratios), percentile(ratios, 0.1), percentile(ratios, 0.9));
    }

    /** Payload bytes per nanosecond (GB/s) of one turn of one loop. */
    private static double turn(PacketMac mac, ByteBuffer packet, int length, PacketKey key, boolean previous) {
        long bytes = 0;
        long start = System.nanoTime();
        long elapsed;
        do {
            for (int i = 0; i < 64; i++) {
                sink += previous ? PacketMacReference.previousTag(mac, packet, 0, length, key, 1) : mac.tag(packet, 0, length, key, 1);
            }
            bytes += 64L * length;
            elapsed = System.nanoTime() - start;
        } while (elapsed < TURN_NANOS);
        return bytes / (double) elapsed;
    }

    private static double median(double[] values) {
        return percentile(values, 0.5);
    }

    private static double percentile(double[] values, double p) {
        double[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[(int) Math.min(sorted.length - 1, Math.round(p * (sorted.length - 1)))];
    }
}
