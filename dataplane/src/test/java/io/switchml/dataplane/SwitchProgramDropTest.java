package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.function.Function;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Every packet the switch must refuse is dropped, counted by reason, and leaves the registers alone. */
class SwitchProgramDropTest {
    private static final PayloadSize SIZE = PayloadSize.B256; // the job's size: 64 elements
    private static final int K = SIZE.elements();
    private static final int JOB = 1;
    private static final int OTHER_JOB = 2;

    private final SwitchHarness harness = new SwitchHarness(2);
    private JobSpec job;

    @BeforeEach
    void installJobs() {
        // 8 slots of one thread: all arrive on switch port 0.
        job = harness.install(TestJobs.job(JOB, 2, SIZE, 8, 1));
        harness.install(TestJobs.job(OTHER_JOB, 2, SIZE, 8, 1));
    }

    /** A refused packet, as worker 0 of job 1 would send it unless the case says otherwise. */
    record Case(String name, DropReason reason, Function<JobSpec, Delivery> delivery) {
        @Override
        public String toString() {
            return name;
        }
    }

    record Delivery(InetAddress source, int sourcePort, int portIndex, ByteBuffer packet) {
        static Delivery fromRank0(JobSpec job, ByteBuffer packet) {
            return new Delivery(job.endpoints().get(0).address(), job.endpoints().get(0).port(0), 0, packet);
        }
    }

    static Stream<Case> refusedPackets() {
        return Stream.of(
                new Case("empty datagram", DropReason.TRUNCATED, job -> Delivery.fromRank0(job, ByteBuffer.allocate(0))),
                new Case("shorter than header and exponents", DropReason.TRUNCATED,
                        job -> Delivery.fromRank0(job, prefix(valid(), ProtocolConstants.PAYLOAD_OFFSET - 1))),
                new Case("payload one byte short", DropReason.TRUNCATED,
                        job -> Delivery.fromRank0(job, prefix(valid(), SIZE.packetBytes() - 1))),
                new Case("payload one byte long", DropReason.TOO_LONG,
                        job -> Delivery.fromRank0(job, extended(valid(), 1))),
                new Case("msg_type 2", DropReason.WRONG_MSG_TYPE,
                        job -> Delivery.fromRank0(job, withByte(valid(), 0, 0x20 | SIZE.code()))),
                new Case("msg_type 0", DropReason.WRONG_MSG_TYPE,
                        job -> Delivery.fromRank0(job, withByte(valid(), 0, SIZE.code()))),
                new Case("unused header bit set", DropReason.UNUSED_BITS,
                        job -> Delivery.fromRank0(job, withByte(valid(), 0, 0x18 | SIZE.code()))),
                new Case("pool_index bit 14 set", DropReason.UNUSED_BITS,
                        job -> Delivery.fromRank0(job, withByte(valid(), 6, 0x40))),
                new Case("unknown source address", DropReason.UNKNOWN_SOURCE,
                        job -> new Delivery(Ipv4.toAddress(0x0A_63_63_63), TestJobs.FIRST_WORKER_PORT, 0, valid())),
                new Case("known address, unknown port", DropReason.UNKNOWN_SOURCE,
                        job -> new Delivery(job.endpoints().get(0).address(), TestJobs.FIRST_WORKER_PORT + 1, 0, valid())),
                new Case("job number nobody installed", DropReason.UNKNOWN_JOB,
                        job -> Delivery.fromRank0(job, TestPackets.packet(SIZE, 77, 1, 0, 0, 0, 0, 1))),
                new Case("job number of another job", DropReason.JOB_MISMATCH,
                        job -> Delivery.fromRank0(job, TestPackets.packet(SIZE, OTHER_JOB, 1, 0, 0, 0, 0, 1))),
                new Case("size code of another size", DropReason.SIZE_MISMATCH,
                        job -> Delivery.fromRank0(job, TestPackets.packet(PayloadSize.B128, JOB, 1, 0, 0, 0, 0, 1))),
                new Case("slot just past the job's", DropReason.SLOT_OUT_OF_RANGE,
                        job -> Delivery.fromRank0(job, TestPackets.packet(SIZE, JOB, 1, 8, 0, 0, 0, 1))),
                new Case("largest slot", DropReason.SLOT_OUT_OF_RANGE,
                        job -> Delivery.fromRank0(job, TestPackets.packet(SIZE, JOB, 1, ProtocolConstants.MAX_SLOTS - 1, 1, 0, 0, 1))),
                new Case("slot on another thread's switch port", DropReason.WRONG_PORT,
                        job -> new Delivery(job.endpoints().get(0).address(), job.endpoints().get(0).port(0), 1, valid())));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusedPackets")
    void refusedPacketIsDroppedCountedAndNotApplied(Case refused) {
        Delivery delivery = refused.delivery().apply(job);

        NextStep next = harness.deliver(delivery.source(), delivery.sourcePort(), delivery.portIndex(), delivery.packet());

        assertThat(next).isEqualTo(NextStep.DROP);
        assertThat(harness.count(refused.reason())).isEqualTo(1);
        for (DropReason other : DropReason.values()) {
            if (other != refused.reason()) {
                assertThat(harness.count(other)).as(other.counterName()).isZero();
            }
        }
        assertThat(harness.count(SwitchCounter.PACKETS_RECEIVED)).isEqualTo(1);
        assertThat(harness.count(SwitchCounter.CONTRIBUTIONS)).isZero();
        assertThat(harness.sink.drain()).isEmpty();
        assertSlotZeroIsUntouched();
    }

    @Test
    void senderWithoutAnIpv4AddressIsAnUnknownSource() {
        assertThat(harness.program.dropNonIpv4Source()).isEqualTo(NextStep.DROP);
        assertThat(harness.count(DropReason.UNKNOWN_SOURCE)).isEqualTo(1);
        assertThat(harness.count(SwitchCounter.PACKETS_RECEIVED)).isEqualTo(1);
    }

    @Test
    void ingressDropSimulatorDropsEveryPacketAtProbabilityOne() {
        harness.dropProbabilities.set(1.0, 0.0);
        for (int i = 0; i < 10; i++) {
            assertThat(harness.contribute(job, i % 2, 0, 0, 0, 0, 1)).isEqualTo(NextStep.DROP);
        }
        assertThat(harness.count(SwitchCounter.INGRESS_SIMULATED_DROPS)).isEqualTo(10);
        assertThat(harness.count(SwitchCounter.CONTRIBUTIONS)).isZero();

        harness.dropProbabilities.set(0.0, 0.0);
        assertSlotZeroIsUntouched();
    }

    @Test
    void ingressDropSimulatorDropsAboutItsShare() {
        harness.dropProbabilities.set(0.25, 0.0);
        ByteBuffer garbage = ByteBuffer.allocate(1);
        for (int i = 0; i < 4000; i++) {
            harness.deliver(Ipv4.toAddress(1), 1, 0, garbage);
        }
        assertThat(harness.count(SwitchCounter.INGRESS_SIMULATED_DROPS)).isBetween(850L, 1150L);
        assertThat(harness.count(SwitchCounter.INGRESS_SIMULATED_DROPS) + harness.count(DropReason.TRUNCATED))
                .isEqualTo(4000);
    }

    @Test
    void egressDropSimulatorDropsResultCopiesButNotTheAggregation() {
        harness.dropProbabilities.set(0.0, 1.0);
        harness.contribute(job, 0, 0, 0, 0, 0, 5);
        assertThat(harness.contribute(job, 1, 0, 0, 0, 0, 6)).isEqualTo(NextStep.MULTICAST);

        assertThat(harness.sink.drain()).isEmpty();
        assertThat(harness.count(SwitchCounter.EGRESS_SIMULATED_DROPS)).isEqualTo(2);
        assertThat(harness.count(SwitchCounter.RESULTS_SENT)).isEqualTo(1);
        assertThat(harness.count(SwitchCounter.PACKETS_SENT)).isZero();

        // The workers retransmit and now get the stored result.
        harness.dropProbabilities.set(0.0, 0.0);
        assertThat(harness.contribute(job, 1, 0, 0, 0, 0, 6)).isEqualTo(NextStep.UNICAST);
        assertThat(harness.sink.drain()).singleElement().satisfies(r -> assertThat(r.elements()[0]).isEqualTo(11));
    }

    @Test
    void resultsThatTheSendQueueRefusesAreCounted() {
        harness.sink.accepting = false;
        harness.contribute(job, 0, 0, 0, 0, 0, 5);
        harness.contribute(job, 1, 0, 0, 0, 0, 6);

        assertThat(harness.count(SwitchCounter.EGRESS_QUEUE_FULL_DROPS)).isEqualTo(2);
        assertThat(harness.count(SwitchCounter.PACKETS_SENT)).isZero();
    }

    /** Slot 0 set 0 of the job has no contribution: both workers' packets make a fresh round. */
    private void assertSlotZeroIsUntouched() {
        harness.contribute(job, 0, 0, 0, 0, 0, TestPackets.filled(K, 3));
        assertThat(harness.contribute(job, 1, 0, 0, 0, 0, TestPackets.filled(K, 4))).isEqualTo(NextStep.MULTICAST);
        assertThat(harness.sink.drain()).hasSize(2).allSatisfy(r -> assertThat(r.elements()).containsOnly(7));
    }

    /** A valid packet of job 1 for slot 0, set 0, whose payload is all 1000. */
    private static ByteBuffer valid() {
        return TestPackets.packet(SIZE, JOB, 1, 0, 0, 0, 0, TestPackets.filled(K, 1000));
    }

    private static ByteBuffer prefix(ByteBuffer packet, int length) {
        return ByteBuffer.wrap(Arrays.copyOf(packet.array(), length));
    }

    private static ByteBuffer extended(ByteBuffer packet, int extra) {
        return ByteBuffer.wrap(Arrays.copyOf(packet.array(), packet.capacity() + extra));
    }

    private static ByteBuffer withByte(ByteBuffer packet, int index, int value) {
        packet.put(index, (byte) value);
        return packet;
    }
}
