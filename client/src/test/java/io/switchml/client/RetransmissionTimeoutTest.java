package io.switchml.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class RetransmissionTimeoutTest {
    private static final long MS = 1_000_000;

    @Test
    void startsAtTheInitialValueAndFollowsSamples() {
        RetransmissionTimeout rto = new RetransmissionTimeout(MS, 20 * MS, 1000 * MS);
        assertThat(rto.timeoutNanos(0)).isEqualTo(20 * MS);
        rto.sample(4 * MS);                          // srtt 4, rttvar 2: 4 + 8 = 12 ms
        assertThat(rto.smoothedRttNanos()).isEqualTo(4 * MS);
        assertThat(rto.timeoutNanos(0)).isEqualTo(12 * MS);
        for (int i = 0; i < 100; i++) {
            rto.sample(2 * MS);                      // converges to 2 ms with no variation
        }
        assertThat(rto.smoothedRttNanos()).isBetween(2 * MS, 2 * MS + MS / 10);
        assertThat(rto.timeoutNanos(0)).isBetween(2 * MS, 3 * MS);
    }

    @Test
    void clampsToFloorAndCeilingAndBacksOff() {
        RetransmissionTimeout rto = new RetransmissionTimeout(10 * MS, 20 * MS, 100 * MS);
        rto.sample(MS / 10);
        assertThat(rto.timeoutNanos(0)).isEqualTo(10 * MS);
        assertThat(rto.timeoutNanos(1)).isEqualTo(20 * MS);
        assertThat(rto.timeoutNanos(3)).isEqualTo(80 * MS);
        assertThat(rto.timeoutNanos(4)).isEqualTo(100 * MS);
        assertThat(rto.timeoutNanos(60)).isEqualTo(100 * MS);
    }
}
