package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.PayloadSize;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** Garbage from anywhere never crashes the switch and never touches an installed job's registers. */
class HostileInputPropertiesTest {
    private static final PayloadSize SIZE = PayloadSize.B128;
    private static final int K = SIZE.elements();
    private static final int JOB = 7;
    private static final int OTHER_JOB = 8;

    /** A datagram's source and the switch port it arrives on. */
    record Source(int ipv4, int port, int portIndex) {
    }

    @Property(tries = 300)
    void randomBytesAreDroppedWithoutSideEffects(@ForAll("sources") List<Source> sources,
                                                 @ForAll @Size(min = 1, max = 8) List<@Size(max = 300) byte[]> datagrams,
                                                 @ForAll @IntRange(min = 0, max = 7) int offset) {
        assertDroppedWithoutSideEffects(sources, datagrams, offset);
    }

    /** Aggregation packets with the right length for their size code, random everywhere else. */
    @Property(tries = 300)
    void wellFramedGarbageIsDroppedWithoutSideEffects(@ForAll("sources") List<Source> sources,
                                                      @ForAll("wellFramed") @Size(min = 1, max = 8) List<byte[]> datagrams,
                                                      @ForAll @IntRange(min = 0, max = 7) int offset) {
        assertDroppedWithoutSideEffects(sources, datagrams, offset);
    }

    private static void assertDroppedWithoutSideEffects(List<Source> sources, List<byte[]> datagrams, int offset) {
        for (int i = 0; i < datagrams.size(); i++) {
            Assume.that(!couldBeValid(datagrams.get(i), sources.get(i % sources.size())));
        }
        SwitchHarness harness = new SwitchHarness(2);
        JobSpec job = harness.install(TestJobs.job(JOB, 2, SIZE, 4, 1));
        harness.install(TestJobs.job(OTHER_JOB, 2, SIZE, 4, 1)); // packets naming it are a job mismatch
        // Slot 0 holds a complete result (sums 3), slot 1 a half-done round (rank 0 sent 10).
        harness.contribute(job, 0, 0, 0, 1, 0, TestPackets.filled(K, 1));
        harness.contribute(job, 1, 0, 0, 2, 0, TestPackets.filled(K, 2));
        harness.contribute(job, 0, 1, 0, 0, 0, TestPackets.filled(K, 10));
        harness.sink.drain();
        long contributions = harness.count(SwitchCounter.CONTRIBUTIONS);

        for (int i = 0; i < datagrams.size(); i++) {
            Source source = sources.get(i % sources.size());
            // The packet need not start at the buffer's first byte.
            ByteBuffer packet = ByteBuffer.allocate(offset + datagrams.get(i).length).position(offset);
            packet.put(datagrams.get(i)).position(offset);
            NextStep next = harness.program.process(source.ipv4(), source.port(), source.portIndex(), packet);
            assertThat(next).isEqualTo(NextStep.DROP);
        }

        assertThat(harness.sink.drain()).isEmpty();
        assertThat(harness.count(SwitchCounter.CONTRIBUTIONS)).isEqualTo(contributions);
        // The stored result is intact and the half-done round still waits for rank 1 only.
        assertThat(harness.contribute(job, 1, 0, 0, 0, 0)).isEqualTo(NextStep.UNICAST);
        assertThat(harness.sink.drain()).singleElement().satisfies(r -> {
            assertThat(r.elements()).containsOnly(3);
            assertThat(r.packet().exponent0()).isEqualTo(2);
        });
        assertThat(harness.contribute(job, 1, 1, 0, 0, 0, TestPackets.filled(K, 20))).isEqualTo(NextStep.MULTICAST);
        assertThat(harness.sink.drain()).hasSize(2).allSatisfy(r -> assertThat(r.elements()).containsOnly(30));
    }

    /** Unknown sources, and the job's own workers (so garbage gets past the worker table). */
    @Provide
    Arbitrary<List<Source>> sources() {
        Arbitrary<Source> unknown = Combinators.combine(
                Arbitraries.integers(), Arbitraries.integers().between(0, 65535), Arbitraries.integers().between(0, 1))
                .as(Source::new);
        Arbitrary<Source> worker = Combinators.combine(
                Arbitraries.integers().between(0, 1), Arbitraries.integers().between(0, 1))
                .as((rank, portIndex) -> new Source(Ipv4.toInt(TestJobs.address(JOB, rank)), TestJobs.FIRST_WORKER_PORT, portIndex));
        return Arbitraries.oneOf(unknown, worker).list().ofMinSize(1).ofMaxSize(4);
    }

    /**
     * msg_type 1 with a length that mostly fits the size code (0..3), the job's number half the
     * time, (or the other job's) half the time, and small slots half the time, so that the
     * later checks (job, size, slot range, port) are reached; the unused bits are set now and then.
     */
    @Provide
    Arbitrary<List<byte[]>> wellFramed() {
        Arbitrary<Integer> jobNumber = Arbitraries.oneOf(Arbitraries.of(JOB, OTHER_JOB), Arbitraries.integers().between(0, 255));
        Arbitrary<Integer> slot = Arbitraries.oneOf(Arbitraries.integers().between(0, 7), Arbitraries.integers().between(0, 0x3FFF));
        Arbitrary<Integer> flags = Arbitraries.of(0, 0, 0, 0x4000, 0x8000, 0xC000); // pool_index bits 14 and 15
        Arbitrary<byte[]> packet = Combinators.combine(
                Arbitraries.integers().between(0, 3),
                Arbitraries.of(0, 0, 0, 0x08),
                Arbitraries.of(0, 0, 0, -1, 1),
                jobNumber, slot, flags, Arbitraries.longs())
                .as((code, unusedBit, lengthError, job, slotNumber, poolFlags, seed) -> {
                    PayloadSize size = PayloadSize.ofCode(code);
                    byte[] bytes = new byte[size.packetBytes() + lengthError];
                    new Random(seed).nextBytes(bytes);
                    ByteBuffer header = ByteBuffer.wrap(bytes);
                    header.put(0, (byte) (0x10 | unusedBit | code));
                    header.put(1, (byte) (int) job);
                    header.putShort(6, (short) (slotNumber | poolFlags));
                    return bytes;
                });
        return packet.list();
    }

    /**
     * True for a packet job 7 would accept: from one of its workers on switch port 0 (which owns
     * all its slots), with msg_type 1, unused bits clear, the job's number and size code, the exact
     * length and one of its 4 slots.
     */
    private static boolean couldBeValid(byte[] bytes, Source source) {
        boolean fromWorker = source.port() == TestJobs.FIRST_WORKER_PORT && source.portIndex() == 0
                && (source.ipv4() == Ipv4.toInt(TestJobs.address(JOB, 0)) || source.ipv4() == Ipv4.toInt(TestJobs.address(JOB, 1)));
        if (!fromWorker || bytes.length != SIZE.packetBytes()) {
            return false;
        }
        ByteBuffer header = ByteBuffer.wrap(bytes);
        int poolIndex = header.getShort(6) & 0xFFFF;
        return header.get(0) == (byte) (0x10 | SIZE.code()) && (header.get(1) & 0xFF) == JOB
                && (poolIndex & 0x4000) == 0 && (poolIndex & 0x3FFF) < 4;
    }
}
