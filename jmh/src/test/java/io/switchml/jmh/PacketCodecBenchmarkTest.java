package io.switchml.jmh;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The codec benchmark writes a valid header and reads back what it wrote. */
class PacketCodecBenchmarkTest {

    @ParameterizedTest
    @EnumSource(BufferKind.class)
    void writesAndReadsTheHeader(BufferKind kind) {
        PacketCodecBenchmark bench = new PacketCodecBenchmark();
        bench.buffer = kind;
        bench.setUp();
        int before = bench.readHeader();

        AggregationPacket packet = bench.writeHeader();
        int round = bench.tsi - 1;
        assertThat(packet.buffer().isDirect()).isEqualTo(kind == BufferKind.DIRECT);
        assertThat(packet.msgType()).isEqualTo(ProtocolConstants.MSG_TYPE_AGGREGATION);
        assertThat(packet.sizeCode()).isEqualTo(PayloadSize.B1024.code());
        assertThat(packet.jobNumber()).isEqualTo(7);
        assertThat(packet.tsi()).isEqualTo(round);
        assertThat(packet.slot()).isEqualTo(round);
        assertThat(packet.set()).isEqualTo(round & 1);
        assertThat(packet.exponent0()).isEqualTo(-3);
        assertThat(packet.exponent1()).isZero();
        assertThat(packet.unusedBitClear()).isTrue();
        assertThat(packet.poolIndexReservedBitClear()).isTrue();
        // The folded read changes with the header, so the benchmark cannot be folded to a constant.
        assertThat(bench.readHeader()).isNotEqualTo(before);
    }
}
