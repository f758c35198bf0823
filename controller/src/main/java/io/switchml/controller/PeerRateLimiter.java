package io.switchml.controller;

import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * A token bucket per peer (an address, or a tenant's name): {@code perSecond} requests sustained,
 * {@code burst} at once. The
 * buckets of the least recently seen peers are forgotten beyond {@link #MAX_PEERS}, so a flood from
 * many addresses cannot grow it either (a forgotten peer starts again with a full bucket).
 */
final class PeerRateLimiter {
    static final int MAX_PEERS = 16_384;

    private final double perNano;
    private final int burst;
    private final LongSupplier nanoClock;
    private final Map<Object, Bucket> buckets = new LinkedHashMap<>(256, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Object, Bucket> eldest) {
            return size() > MAX_PEERS;
        }
    };

    PeerRateLimiter(int perSecond, int burst, LongSupplier nanoClock) {
        this.perNano = perSecond / 1e9;
        this.burst = burst;
        this.nanoClock = nanoClock;
    }

    /** Takes one token from the peer's bucket; false when it is empty. A null peer is never limited. */
    synchronized boolean tryAcquire(Object peer) {
        if (peer == null) {
            return true;
        }
        long now = nanoClock.getAsLong();
        Bucket bucket = buckets.computeIfAbsent(peer, p -> new Bucket(burst, now));
        bucket.tokens = Math.min(burst, bucket.tokens + (now - bucket.countedAt) * perNano);
        bucket.countedAt = now;
        if (bucket.tokens < 1) {
            return false;
        }
        bucket.tokens -= 1;
        return true;
    }

    private static final class Bucket {
        double tokens;
        /** When {@link #tokens} was counted, in the clock's nanoseconds. */
        long countedAt;

        Bucket(double tokens, long countedAt) {
            this.tokens = tokens;
            this.countedAt = countedAt;
        }
    }

    synchronized int peers() {
        return buckets.size();
    }
}
