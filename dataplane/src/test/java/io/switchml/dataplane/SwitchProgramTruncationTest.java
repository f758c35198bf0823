package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.protocol.PayloadSize;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every truncation of a valid packet, sent from a registered worker's own address at any point of a
 * round, is refused or replaced: the round and the next one return the exact sums to every worker, in
 * SwitchML's jobs (whose parser takes a packet only at its size code's length) and in this project's.
 */
class SwitchProgramTruncationTest {
    private static final int WORKERS = 4;
    private static final int JOB = 3;
    private static final int SLOT = 1;
    private static final int CUT_RANK = 1;
    private static final int SWITCHML_WORKER_PORT = 5000;

    enum Kind { SWITCHML_SESSION, OURS }

    /** When the cut-off copy arrives in the first round. */
    enum Point { OPENS_THE_ROUND, AFTER_TWO_CONTRIBUTIONS, AFTER_THE_ROUND }

    static Stream<Arguments> cases() {
        List<Arguments> all = new ArrayList<>();
        for (Kind kind : Kind.values()) {
            for (PayloadSize size : List.of(PayloadSize.B256, PayloadSize.B1024)) { // k = 64 and k = 256
                for (Point point : Point.values()) {
                    all.add(Arguments.of(kind, size, point));
                }
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "{0}, {1}, cut-off copy {2}")
    @MethodSource("cases")
    void everyTruncationLeavesThisRoundAndTheNextExact(Kind kind, PayloadSize size, Point point) {
        for (int length = 0; length < size.packetBytes(); length++) {
            Round round = new Round(kind, size);
            ByteBuffer valid = round.packet(CUT_RANK, 0);
            ByteBuffer cut = ByteBuffer.allocate(length).put(valid.duplicate().limit(length)).flip();

            if (point == Point.OPENS_THE_ROUND) {
                round.send(CUT_RANK, cut);
            }
            for (int rank = 0; rank < WORKERS; rank++) {
                round.send(rank, round.packet(rank, 0));
                if (rank == 1 && point == Point.AFTER_TWO_CONTRIBUTIONS) {
                    round.send(CUT_RANK, cut);
                }
            }
            if (point == Point.AFTER_THE_ROUND) {
                round.send(CUT_RANK, cut);
            }
            round.retransmitUntilEveryRankHasItsResult(0);
            round.playRound(1);

            assertThat(round.noticed()).as("cut to %d bytes: refused or replaced", length).isPositive();
        }
    }

    /** One job on a fresh switch, its workers' packets and the results they received. */
    private static final class Round {
        private final SwitchHarness harness = new SwitchHarness();
        private final Kind kind;
        private final PayloadSize size;
        private final JobSpec job;

        Round(Kind kind, PayloadSize size) {
            this.kind = kind;
            this.size = size;
            List<WorkerEndpoint> endpoints = new ArrayList<>();
            for (int rank = 0; rank < WORKERS; rank++) {
                endpoints.add(kind == Kind.SWITCHML_SESSION
                        ? WorkerEndpoint.matchedByAddress(TestJobs.address(JOB, rank))
                        : WorkerEndpoint.of(TestJobs.address(JOB, rank), TestJobs.FIRST_WORKER_PORT));
            }
            this.job = harness.install(new JobSpec(JOB, "truncated", size, 4, 1, endpoints, kind == Kind.OURS));
        }

        /** Rank's packet for the slot's round: round r uses set r mod 2 and, in this project's jobs, tsi r. */
        ByteBuffer packet(int rank, int round) {
            int[] values = new int[size.elements()];
            for (int i = 0; i < values.length; i++) {
                values[i] = value(rank, round, i);
            }
            return TestPackets.packet(size, job.jobNumber(), round, SLOT, round & 1, exponent(rank, round), 0, values);
        }

        void send(int rank, ByteBuffer packet) {
            InetAddress address = TestJobs.address(JOB, rank);
            int port = kind == Kind.SWITCHML_SESSION ? SWITCHML_WORKER_PORT : TestJobs.FIRST_WORKER_PORT;
            harness.deliver(address, port, 0, packet.duplicate());
        }

        void playRound(int round) {
            for (int rank = 0; rank < WORKERS; rank++) {
                send(rank, packet(rank, round));
            }
            retransmitUntilEveryRankHasItsResult(round);
        }

        /**
         * Collects the round's results, resending (as the workers' timers would) the packets of ranks
         * still without one; every result any rank receives must be the exact sum.
         */
        void retransmitUntilEveryRankHasItsResult(int round) {
            boolean[] answered = new boolean[WORKERS];
            for (int attempt = 0; attempt < 3; attempt++) {
                for (RecordingSink.Sent sent : harness.sink.drain()) {
                    assertThat(sent.bytes()).as("a result as long as the packets").hasSize(size.packetBytes());
                    assertThat(TestPackets.elements(sent.bytes())).as("round %d's sums", round).containsExactly(expected(round));
                    assertThat(TestPackets.wrap(sent.bytes()).exponent0()).isEqualTo(exponent(WORKERS - 1, round));
                    answered[rankOf(sent.recipient())] = true;
                }
                boolean all = true;
                for (int rank = 0; rank < WORKERS; rank++) {
                    if (!answered[rank]) {
                        all = false;
                        send(rank, packet(rank, round));
                    }
                }
                if (all) {
                    return;
                }
            }
            assertThat(answered).as("every rank has round %d's result", round).containsOnly(true);
        }

        long noticed() {
            return harness.count(DropReason.TRUNCATED) + harness.count(DropReason.LENGTH_MISMATCH)
                    + harness.count(SwitchCounter.ROUNDS_REOPENED);
        }

        private int[] expected(int round) {
            int[] sums = new int[size.elements()];
            for (int i = 0; i < sums.length; i++) {
                for (int rank = 0; rank < WORKERS; rank++) {
                    sums[i] += value(rank, round, i);
                }
            }
            return sums;
        }

        private static int rankOf(InetSocketAddress recipient) {
            return recipient.getAddress().getAddress()[3];
        }

        private static int value(int rank, int round, int i) {
            return 1000 * (rank + 1) + 7 * round + i;
        }

        private static int exponent(int rank, int round) {
            return rank + 1 + round;
        }
    }

}
