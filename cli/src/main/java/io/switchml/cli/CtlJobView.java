package io.switchml.cli;

import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JobStatus;
import io.switchml.controller.proto.WorkerStatus;
import io.switchml.protocol.PayloadSize;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/** A job as the ctl command shows it, in a table row or as JSON; shared by {@code jobs} and {@code job}. */
final class CtlJobView {
    /**
     * What the switch adds: 32-bit integers (the workers' quantized values), whatever the tensors'
     * type on the workers, which the switch never sees.
     */
    static final String ELEMENT_TYPE = "int32";
    private static final String ROW = "%-4s %-20s %-8s %-22s %-6s %s%n";

    private CtlJobView() {
    }

    static Map<String, Object> json(JobStatus job) {
        JobParameters p = job.getParameters();
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("job_number", job.getInstalled() ? job.getJobNumber() : null);
        m.put("name", job.getJobName());
        m.put("installed", job.getInstalled());
        // Whose share of the switch it counts against (docs/security.md); null: the operator's, no tenant's.
        m.put("tenant", job.getTenant().isEmpty() ? null : job.getTenant());
        m.put("workers_joined", job.getEndpointsCount());
        m.put("workers_expected", p.getNumWorkers());
        m.put("threads", p.getThreads());
        m.put("slots_per_thread", p.getSlotsPerThread());
        m.put("slots", p.getThreads() * p.getSlotsPerThread());
        m.put("element_type", ELEMENT_TYPE);
        m.put("elements_per_packet", p.getElementsPerPacket());
        m.put("packet_bytes", packetBytes(p));
        List<Map<String, Object>> workers = new ArrayList<>();
        for (WorkerStatus w : job.getEndpointsList()) {
            Map<String, Object> worker = new LinkedHashMap<>();
            worker.put("rank", w.getRank());
            worker.put("address", w.getAddress());
            worker.put("ports", w.getPortsList());
            worker.put("left", w.getLeft());
            worker.put("failed", w.getFailed());
            workers.add(worker);
        }
        m.put("workers", workers);
        return m;
    }

    static void tableHeader(PrintStream out) {
        out.printf(Locale.ROOT, ROW, "JOB", "NAME", "WORKERS", "SLOTS (THREADS x WIN)", "TYPE", "PACKET");
    }

    /** The job's row, then one indented line per worker. */
    static void tableRows(JobStatus job, PrintStream out) {
        JobParameters p = job.getParameters();
        out.printf(Locale.ROOT, ROW, job.getInstalled() ? Integer.toString(job.getJobNumber()) : "-", job.getJobName(),
                job.getEndpointsCount() + "/" + p.getNumWorkers() + (job.getInstalled() ? "" : "*"),
                p.getThreads() * p.getSlotsPerThread() + " (" + p.getThreads() + " x " + p.getSlotsPerThread() + ")",
                ELEMENT_TYPE, packetBytes(p) + " B (" + p.getElementsPerPacket() + " elements)");
        out.printf(Locale.ROOT, "     tenant %s%n", job.getTenant().isEmpty() ? "none (the operator's)" : job.getTenant());
        for (WorkerStatus w : job.getEndpointsList()) {
            out.printf(Locale.ROOT, "     rank %-4d %-15s ports %s%s%n", w.getRank(), w.getAddress(),
                    w.getPortsList().stream().map(String::valueOf).collect(Collectors.joining(",")),
                    w.getFailed() ? " (failed)" : w.getLeft() ? " (left)" : "");
        }
    }

    /** The UDP payload of each of the job's packets: header, exponents and the elements. */
    private static int packetBytes(JobParameters p) {
        return PayloadSize.ofElements(p.getElementsPerPacket()).packetBytes();
    }
}
