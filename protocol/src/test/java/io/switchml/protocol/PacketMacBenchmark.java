package io.switchml.protocol;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The tag of one authenticated packet (docs/ARCHITECTURE.md section 19), NH and AES together: {@link PacketMac}'s
 * against the loop it replaced ({@link PacketMacReference#previousTag}), in the same run so that the ratio holds on
 * a loaded machine. Lives with the package-private hash it measures; the jmh module runs it from this test-jar.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class PacketMacBenchmark {
    /** Full packets of B1024 (256 elements) and of the jumbo size (15 360). */
    @Param({"256", "15360"})
    public int elements;
    @Param({"true", "false"})
    public boolean direct;

    private final PacketMac mac = new PacketMac();
    private PacketKey key;
    private ByteBuffer packet;
    private int length;

    @Setup
    public void setUp() {
        PayloadSize size = PayloadSize.ofElements(elements);
        SplittableRandom random = new SplittableRandom(53);
        byte[] digest = new byte[32];
        byte[] salt = new byte[PacketKey.SALT_BYTES];
        random.nextBytes(digest);
        random.nextBytes(salt);
        key = PacketKey.derive(digest, salt, size);
        length = AggregationPacket.bytesFor(elements);
        packet = direct ? ByteBuffer.allocateDirect(length + PacketMac.TAG_BYTES) : ByteBuffer.allocate(length + PacketMac.TAG_BYTES);
        for (int i = 0; i < packet.capacity(); i++) {
            packet.put(i, (byte) random.nextInt(256));
        }
    }

    @Benchmark
    public long tag() {
        return mac.tag(packet, 0, length, key, 1);
    }

    @Benchmark
    public long previousTag() {
        return PacketMacReference.previousTag(mac, packet, 0, length, key, 1);
    }
}
