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
    void aFloodFromManyAddressesIsBoundedAndSummedUpInOneLine() {
        for (int p = 0; p < PeerLogLimiter.MAX_PEERS + 10; p++) {
            log.log("peer-" + p, "first of " + p);
            log.log("peer-" + p, "second of " + p);
        }
        assertThat(log.peers()).isEqualTo(PeerLogLimiter.MAX_PEERS);
        assertThat(lines).as("one line per peer, no summary yet").hasSize(PeerLogLimiter.MAX_PEERS + 10);
        clock.addAndGet(Duration.ofMinutes(1).toNanos());
        log.flush();
        assertThat(lines).hasSize(PeerLogLimiter.MAX_PEERS + 11).last().asString()
                .startsWith((PeerLogLimiter.MAX_PEERS + 10) + " more malformed requests from " + (PeerLogLimiter.MAX_PEERS + 10)
                        + " peers, not logged (most from ");
        assertThat(log.suppressed()).isEqualTo(PeerLogLimiter.MAX_PEERS + 10);
    }

    @Test
    void aBudgetPerPeerAndInAllBoundsTheLinesOfAnInterval() {
        List<String> out = new ArrayList<>();
        PeerLogLimiter budget = new PeerLogLimiter("lines about jobs", Duration.ofMinutes(1), 20, 30, clock::get, out::add);
        for (int i = 0; i < 100; i++) {
            budget.log("a", "a " + i);
        }
        assertThat(out).hasSize(20).last().isEqualTo("a 19 (more from a within 60 s are counted, not logged)");
        for (int i = 0; i < 100; i++) {
            budget.log("b", "b " + i);
        }
        assertThat(out).as("the total is spent after 10 of b's").hasSize(30).last()
                .isEqualTo("b 9 (more from anyone within 60 s are counted, not logged)");
        assertThat(budget.suppressed()).isEqualTo(170);
        clock.addAndGet(Duration.ofMinutes(1).toNanos());
        budget.flush();
        assertThat(out.subList(30, out.size())).containsExactly(
                "a: 80 more lines about jobs in the 60 s after the 20 logged",
                "b: 90 more lines about jobs in the 60 s after the 10 logged");
        budget.log("b", "b again");
        assertThat(out).last().isEqualTo("b again");
    }
}
