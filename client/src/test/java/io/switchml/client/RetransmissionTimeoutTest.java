package io.switchml.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RetransmissionTimeoutTest {
    private static final long MS = 1_000_000;

    @Test
    void startsAtTheInitialValueAndFollowsSamples() {
        RetransmissionTimeout rto = new RetransmissionTimeout(MS, 20 * MS, 1000 * MS);
        assertThat(rto.timeoutNanos()).isEqualTo(20 * MS);
        rto.sample(4 * MS);                          // srtt 4, rttvar 2: 4 + 8 = 12 ms
        assertThat(rto.smoothedRttNanos()).isEqualTo(4 * MS);
        assertThat(rto.timeoutNanos()).isEqualTo(12 * MS);
        for (int i = 0; i < 100; i++) {
            rto.sample(2 * MS);                      // converges to 2 ms with no variation
        }
        assertThat(rto.smoothedRttNanos()).isBetween(2 * MS, 2 * MS + MS / 10);
        assertThat(rto.timeoutNanos()).isBetween(2 * MS, 3 * MS);
    }

    @Test
    void clampsToFloorAndCeilingAndBacksOffUntilAResultArrives() {
        RetransmissionTimeout rto = new RetransmissionTimeout(10 * MS, 20 * MS, 100 * MS);
        assertThat(rto.reorderWindowNanos()).as("before any sample").isEqualTo(20 * MS);
        rto.sample(MS / 10);
        assertThat(rto.timeoutNanos()).isEqualTo(10 * MS);
        assertThat(rto.reorderWindowNanos()).isEqualTo(MS / 40);
        rto.backoff();
        assertThat(rto.timeoutNanos()).isEqualTo(20 * MS);
        rto.backoff();
        rto.backoff();
        assertThat(rto.timeoutNanos()).isEqualTo(80 * MS);
        rto.backoff();
        assertThat(rto.timeoutNanos()).isEqualTo(100 * MS);
        for (int i = 0; i < 60; i++) {
            rto.backoff();
        }
        assertThat(rto.timeoutNanos()).isEqualTo(100 * MS);
        rto.answered();
        assertThat(rto.timeoutNanos()).isEqualTo(10 * MS);
    }

    @Test
    void spuriousRetransmissionsWidenTheReorderingWindowUpToOneRtt() {
        RetransmissionTimeout rto = new RetransmissionTimeout(MS, 20 * MS, 1000 * MS);
        rto.sample(4 * MS);
        assertThat(rto.reorderWindowNanos()).isEqualTo(MS);
        rto.spuriousRetransmission();
        assertThat(rto.reorderWindowNanos()).isEqualTo(2 * MS);
        for (int i = 0; i < 5; i++) {
            rto.spuriousRetransmission();
        }
        assertThat(rto.reorderWindowNanos()).isEqualTo(4 * MS);
        for (int i = 0; i < 1024; i++) {
            rto.answered();
        }
        assertThat(rto.reorderWindowNanos()).isEqualTo(3 * MS);
    }
}
