package io.switchml.controller;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class PeerRateLimiterTest {
    @Test
    void aPeerGetsItsBurstThenItsRateAndOthersAreUnaffected() throws Exception {
        AtomicLong nanos = new AtomicLong(1_000);
        PeerRateLimiter limiter = new PeerRateLimiter(10, 3, nanos::get);
        InetAddress a = InetAddress.getByName("10.0.0.1");
        InetAddress b = InetAddress.getByName("10.0.0.2");

        assertThat(limiter.tryAcquire(a)).isTrue();
        assertThat(limiter.tryAcquire(a)).isTrue();
        assertThat(limiter.tryAcquire(a)).isTrue();
        assertThat(limiter.tryAcquire(a)).as("burst spent").isFalse();
        assertThat(limiter.tryAcquire(b)).as("another peer has its own bucket").isTrue();

        nanos.addAndGet(100_000_000); // 0.1 s at 10 per second: one more
        assertThat(limiter.tryAcquire(a)).isTrue();
        assertThat(limiter.tryAcquire(a)).isFalse();
        nanos.addAndGet(10_000_000_000L); // a long pause refills no more than the burst
        assertThat(limiter.tryAcquire(a)).isTrue();
        assertThat(limiter.tryAcquire(a)).isTrue();
        assertThat(limiter.tryAcquire(a)).isTrue();
        assertThat(limiter.tryAcquire(a)).isFalse();
        assertThat(limiter.tryAcquire(null)).as("no address, no limit").isTrue();
    }

    @Test
    void itRemembersABoundedNumberOfPeers() throws Exception {
        PeerRateLimiter limiter = new PeerRateLimiter(1, 1, () -> 0);
        for (int i = 0; i < PeerRateLimiter.MAX_PEERS + 100; i++) {
            limiter.tryAcquire(InetAddress.getByAddress(new byte[] {10, (byte) (i >> 16), (byte) (i >> 8), (byte) i}));
        }
        assertThat(limiter.peers()).isEqualTo(PeerRateLimiter.MAX_PEERS);
    }
}
