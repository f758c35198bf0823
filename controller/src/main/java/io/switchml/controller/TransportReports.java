package io.switchml.controller;

import io.switchml.controller.proto.WorkerTransport;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The ranks' transport reports as a job keeps them, and as inspection shows them (with their age). */
final class TransportReports {
    private TransportReports() {
    }

    /** A report and when it arrived ({@code System.nanoTime()}). */
    record Received(WorkerTransport transport, long arrivedAtNanos) {
    }

    /** The reports in the given order, each with how long ago it arrived at {@code nowNanos}. */
    static List<WorkerTransport> aged(Collection<Received> reports, long nowNanos) {
        List<WorkerTransport> out = new ArrayList<>(reports.size());
        for (Received r : reports) {
            out.add(r.transport().toBuilder()
                    .setReportedMsAgo(Math.max(0, TimeUnit.NANOSECONDS.toMillis(nowNanos - r.arrivedAtNanos()))).build());
        }
        return out;
    }
}
