package io.switchml.cli;

import io.switchml.control.ControlChannel;
import io.switchml.controller.proto.JobDetailRequest;
import io.switchml.controller.proto.JobDetailResponse;
import io.switchml.controller.proto.SlotCopy;
import io.switchml.controller.proto.WorkerTransport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;

/** {@code switchml ctl job}: one job in detail, with the seen-bitmaps of its slots in progress. */
@Command(name = "job", mixinStandardHelpOptions = true,
        description = "Show one job: its workers, who left or died, each rank's transport as it last reported it"
                + " (congestion window, base and smoothed RTT, retransmissions), and for each slot copy with a round in"
                + " progress on the switch which ranks have contributed (its seen-bitmap).")
final class CtlJobCommand implements Callable<Integer> {
    /** Said wherever register contents are shown: the receive threads keep writing while they are read. */
    static final String UNSYNCHRONIZED = "read from the switch's registers without synchronizing with its receive"
            + " threads: a diagnosis, not an exact snapshot";

    @ParentCommand
    CtlCommand ctl;

    @Parameters(paramLabel = "NUMBER|NAME", description = "The job's number, or its name (a name made of digits only"
            + " is taken as a number).")
    String job;

    @Option(names = "--max-slots", defaultValue = "64", paramLabel = "N",
            description = "List at most this many slot copies in progress (default: ${DEFAULT-VALUE}); all are counted.")
    int maxSlots;

    @Override
    public Integer call() {
        CtlOutput output = ctl.output();
        if (maxSlots < 1) {
            throw new IllegalArgumentException("--max-slots must be at least 1, not " + maxSlots);
        }
        JobDetailRequest.Builder request = JobDetailRequest.newBuilder().setMaxSlotCopies(maxSlots);
        if (job.matches("\\d{1,9}")) {
            request.setJobNumber(Integer.parseInt(job));
        } else {
            request.setJobName(job);
        }
        JobDetailResponse detail;
        try (ControlChannel controller = ctl.connect()) {
            detail = controller.call("show job " + job, ctl.timeout(), stub -> stub.jobDetail(request.build()));
        }
        output.print(json(detail), out -> table(detail, out));
        return 0;
    }

    private static Map<String, Object> json(JobDetailResponse d) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("job", CtlJobView.json(d.getJob()));
        m.put("job_id", d.getJobId());
        m.put("left_ranks", d.getLeftRanksList());
        m.put("failed_ranks", d.getFailedRanksList());
        m.put("aborted_reason", d.getAbortedReason().isEmpty() ? null : d.getAbortedReason());
        List<Map<String, Object>> transport = new ArrayList<>();
        for (WorkerTransport t : d.getTransportList()) {
            Map<String, Object> w = new LinkedHashMap<>();
            w.put("rank", t.getRank());
            w.put("transport", t.getTransport().isEmpty() ? null : t.getTransport());
            w.put("congestion_control", t.getCongestionControl());
            w.put("congestion_window", t.getCongestionControl() ? t.getCongestionWindow() : null);
            w.put("base_rtt_us", t.getBaseRttNs() < 0 ? null : t.getBaseRttNs() / 1000);
            w.put("smoothed_rtt_us", t.getSmoothedRttNs() / 1000);
            w.put("packets_sent", t.getPacketsSent());
            w.put("retransmissions", t.getRetransmissions());
            w.put("window_delay_decreases", t.getWindowDelayDecreases());
            w.put("window_loss_decreases", t.getWindowLossDecreases());
            w.put("random_losses", t.getRandomLosses());
            w.put("reported_ms_ago", t.getReportedMsAgo());
            w.put("counters", new TreeMap<>(t.getCountersMap())); // every counter the rank declares
            transport.add(w);
        }
        m.put("transport", transport);
        m.put("on_switch", d.getOnSwitch());
        if (d.getOnSwitch()) {
            Map<String, Object> bitmaps = new LinkedHashMap<>();
            bitmaps.put("note", UNSYNCHRONIZED);
            bitmaps.put("slots", d.getSlots());
            bitmaps.put("slot_copies_in_progress", d.getIncompleteSlots());
            bitmaps.put("missing_ranks", d.getMissingRanksList());
            List<Map<String, Object>> copies = new ArrayList<>();
            for (SlotCopy c : d.getSlotCopiesList()) {
                Map<String, Object> copy = new LinkedHashMap<>();
                copy.put("slot", c.getSlot());
                copy.put("set", c.getSet());
                copy.put("round", c.getRound());
                copy.put("contributed_ranks", c.getContributedRanksList());
                copy.put("remaining", c.getRemaining());
                copies.add(copy);
            }
            bitmaps.put("slot_copies", copies);
            bitmaps.put("truncated", d.getSlotCopiesTruncated());
            m.put("slot_bitmaps", bitmaps);
        }
        return m;
    }

    private static void table(JobDetailResponse d, PrintStream out) {
        CtlJobView.tableHeader(out);
        CtlJobView.tableRows(d.getJob(), out);
        if (d.getJobId() != 0) {
            out.println("job id: " + Long.toUnsignedString(d.getJobId()));
        }
        if (d.getLeftRanksCount() > 0) {
            out.println("left: ranks " + d.getLeftRanksList());
        }
        if (!d.getAbortedReason().isEmpty()) {
            out.println("ABORTED: ranks " + d.getFailedRanksList() + " died: " + d.getAbortedReason());
        }
        if (d.getTransportCount() > 0) {
            out.printf(Locale.ROOT, "%ntransport (each rank's last report):%n%-6s %-5s %-10s %-10s %-10s %-12s %-9s %-16s %-12s %s%n",
                    "RANK", "VIA", "WINDOW", "BASE_RTT", "SRTT", "PACKETS", "RETRANS", "DECREASES d/l", "RANDOM_LOSS", "AGE");
            for (WorkerTransport t : d.getTransportList()) {
                out.printf(Locale.ROOT, "%-6d %-5s %-10s %-10s %-10s %-12d %-9d %-16s %-12d %.1f s%n", t.getRank(),
                        t.getTransport().isEmpty() ? "-" : t.getTransport(),
                        t.getCongestionControl() ? String.format(Locale.ROOT, "%.1f", t.getCongestionWindow()) : "fixed",
                        t.getBaseRttNs() < 0 ? "-" : micros(t.getBaseRttNs()), micros(t.getSmoothedRttNs()),
                        t.getPacketsSent(), t.getRetransmissions(),
                        t.getWindowDelayDecreases() + "/" + t.getWindowLossDecreases(), t.getRandomLosses(),
                        t.getReportedMsAgo() / 1000.0);
            }
        }
        if (!d.getOnSwitch()) {
            out.println("not on the switch (" + (d.getJob().getInstalled() ? "aborted" : "still forming") + "): no slot bitmaps");
            return;
        }
        int workers = d.getJob().getParameters().getNumWorkers();
        out.printf(Locale.ROOT, "%nslot bitmaps (%s):%n", UNSYNCHRONIZED);
        out.printf(Locale.ROOT, "%d of %d slot copies (%d slots x 2 sets) have a round in progress; missing ranks: %s%n",
                d.getIncompleteSlots(), 2 * d.getSlots(), d.getSlots(), d.getMissingRanksList());
        if (d.getSlotCopiesCount() > 0) {
            out.printf(Locale.ROOT, "%-6s %-4s %-10s %-10s %s%n", "SLOT", "SET", "ROUND", "REMAINING",
                    "SEEN (rank 0.." + (workers - 1) + ", x = contributed)");
            for (SlotCopy c : d.getSlotCopiesList()) {
                out.printf(Locale.ROOT, "%-6d %-4d %-10s %-10d %s%n", c.getSlot(), c.getSet(),
                        c.getRound() < 0 ? "-" : Long.toString(c.getRound()), c.getRemaining(), bitmap(c, workers));
            }
        }
        if (d.getSlotCopiesTruncated()) {
            out.println("... " + (d.getIncompleteSlots() - d.getSlotCopiesCount()) + " more (--max-slots)");
        }
        out.println("per-job counters: none; the switch counts per port for all jobs together (switchml ctl stats)");
    }

    private static String micros(long nanos) {
        return String.format(Locale.ROOT, "%.0f us", nanos / 1000.0);
    }

    /** The seen-bitmap, one character per rank: x where it contributed, . where not. */
    private static String bitmap(SlotCopy copy, int workers) {
        char[] seen = ".".repeat(workers).toCharArray();
        copy.getContributedRanksList().forEach(rank -> seen[rank] = 'x');
        return new String(seen);
    }
}
