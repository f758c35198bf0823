package io.switchml.controller;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Security round 4, finding 6: well-formed calls that make the controller log (a job of a long name
 * joined and left, again and again) cost a tenant at most {@link JobLog#PER_TENANT} lines a minute;
 * the rest are counted, and the switch goes on serving.
 */
class JobLogFloodTest extends ControllerTestSupport {
    private static final int CYCLES = 300;

    @Test
    void joinAndLeaveChurnWithLongNamesIsCountedNotLogged() {
        String longName = "churn-" + "x".repeat(190);
        for (int i = 0; i < CYCLES; i++) {
            int number = formJob(longName + i, 1, 40_000);
            stub().leave(leave(number, 0));
        }
        // Two lines a cycle (installed, ended); all from loopback, one tenant.
        long notWritten = service.logLinesNotWritten();
        long written = 2L * CYCLES - notWritten;
        System.out.printf("join+leave churn: %d cycles, %d lines about jobs written, %d counted (%d B of names each)%n",
                CYCLES, written, notWritten, longName.length() + 3);
        assertThat(written).isBetween(1L, (long) JobLog.PER_TENANT);

        // The switch still forms a job of two ranks.
        int number = formJob("after-the-churn", 2, 41_000);
        assertThat(service.dataplane().job(number)).isPresent();
    }
}
