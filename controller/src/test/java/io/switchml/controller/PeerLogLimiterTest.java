package io.switchml.controller;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class PeerLogLimiterTest {
    private final AtomicLong clock = new AtomicLong();
    private final List<String> lines = new ArrayList<>();
    private final PeerLogLimiter log = new PeerLogLimiter("malformed requests", Duration.ofMinutes(1), clock::get, lines::add);

    @Test
    void aPeerGetsOneLineAnIntervalAndTheRestAreCountedInOneSummary() {
        for (int i = 0; i < 5_000; i++) {
            log.log("10.0.0.7", "bad request " + i);
        }
        assertThat(lines).containsExactly("bad request 0 (more from 10.0.0.7 within 60 s are counted, not logged)");

        clock.addAndGet(Duration.ofSeconds(59).toNanos());
        log.flush();
        assertThat(lines).as("the interval is not over").hasSize(1);

        clock.addAndGet(Duration.ofSeconds(1).toNanos());
        log.flush();
        assertThat(lines).hasSize(2).last()
                .isEqualTo("10.0.0.7: 4999 more malformed requests in the 60 s after the one logged");
        assertThat(log.peers()).as("forgotten once its interval is written out").isZero();

        log.log("10.0.0.7", "bad request again");
        assertThat(lines).hasSize(3).last().asString().startsWith("bad request again");
    }

    @Test
    void peersAreCountedApartAndAQuietPeerHasNoSummary() {
        log.log("10.0.0.1", "one");
        log.log("10.0.0.2", "two");
        log.log("10.0.0.2", "two again");
        clock.addAndGet(Duration.ofMinutes(1).toNanos());
        log.log("10.0.0.2", "two later");
        assertThat(lines).containsExactly(
                "one (more from 10.0.0.1 within 60 s are counted, not logged)",
                "two (more from 10.0.0.2 within 60 s are counted, not logged)",
                "10.0.0.2: 1 more malformed requests in the 60 s after the one logged",
                "two later (more from 10.0.0.2 within 60 s are counted, not logged)");
    }

    @Test
    void aFloodFromManyAddressesIsBoundedAndForgottenPeersCountsAreWrittenOut() {
        for (int p = 0; p < PeerLogLimiter.MAX_PEERS + 10; p++) {
            log.log("peer-" + p, "first of " + p);
            log.log("peer-" + p, "second of " + p);
        }
        assertThat(log.peers()).isEqualTo(PeerLogLimiter.MAX_PEERS);
        assertThat(lines).filteredOn(l -> l.endsWith("after the one logged")).hasSize(10)
                .first().isEqualTo("peer-0: 1 more malformed requests in the 60 s after the one logged");
    }
}
