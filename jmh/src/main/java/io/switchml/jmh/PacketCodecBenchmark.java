package io.switchml.jmh;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
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

/** The {@link AggregationPacket} flyweight: writing a whole header, and reading every header field. */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class PacketCodecBenchmark {
    @Param({"DIRECT", "HEAP"})
    BufferKind buffer;

    final AggregationPacket packet = new AggregationPacket();
    /** Changes every write, so the JIT cannot hoist the header out of the loop. */
    int tsi;

    @Setup
    public void setUp() {
        packet.wrap(buffer.packet(PayloadSize.B1024.packetBytes()), 0);
        writeHeader();
    }

    /** What a worker writes before each packet's payload. */
    @Benchmark
    public AggregationPacket writeHeader() {
        int round = tsi++;
        return packet.header(PayloadSize.B1024, 7, round, round & (ProtocolConstants.MAX_SLOTS - 1), round & 1, -3, 0);
    }

    /** What the switch's parser reads of each packet, folded into one value for the blackhole. */
    @Benchmark
    public int readHeader() {
        return packet.msgType() ^ packet.sizeCode() << 4 ^ packet.jobNumber() << 8 ^ packet.tsi()
                ^ packet.slot() << 12 ^ packet.set() << 26 ^ packet.exponent0() << 20 ^ packet.exponent1() << 28
                ^ (packet.unusedBitClear() ? 1 : 0) ^ (packet.poolIndexReservedBitClear() ? 2 : 0);
    }
}
