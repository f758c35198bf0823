package io.switchml.cli;

import io.switchml.controller.proto.StatusResponse;
import picocli.CommandLine.Command;
import picocli.CommandLine.ParentCommand;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code switchml ctl stats}: the switch's counters, drops by reason, and its drop simulator. */
@Command(name = "stats", mixinStandardHelpOptions = true,
        description = "Show the switch's counters since it started (summed over its ports): packets received, results"
                + " sent, retransmissions answered, drops by reason, ...; and the drop simulator's probabilities.")
final class CtlStatsCommand implements Callable<Integer> {
    /** The switch's counters named drops_REASON count the packets it refused for REASON. */
    private static final String DROP_PREFIX = "drops_";

    @ParentCommand
    CtlCommand ctl;

    @Override
    public Integer call() {
        CtlOutput output = ctl.output();
        StatusResponse status = ctl.status("read the switch's statistics");
        // In the order the switch lists them (its declaration order; the protobuf runtime keeps it).
        Map<String, Long> counters = new LinkedHashMap<>();
        Map<String, Long> drops = new LinkedHashMap<>();
        status.getCountersMap().forEach((name, value) -> {
            if (name.startsWith(DROP_PREFIX)) {
                drops.put(name.substring(DROP_PREFIX.length()), value);
            } else {
                counters.put(name, value);
            }
        });
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("counters", counters);
        json.put("drops_by_reason", drops);
        json.put("drop_probabilities", Map.of("ingress", status.getDropProbabilities().getIngress(),
                "egress", status.getDropProbabilities().getEgress()));
        json.put("jobs_installed", status.getJobsCount());
        json.put("jobs_forming", status.getFormingJobsCount());
        output.print(json, out -> {
            counters.forEach((name, value) -> out.printf(Locale.ROOT, "%-28s %d%n", name, value));
            out.println("drops by reason:");
            drops.forEach((reason, value) -> out.printf(Locale.ROOT, "  %-26s %d%n", reason, value));
            out.printf(Locale.ROOT, "drop simulator: ingress %s, egress %s%n",
                    status.getDropProbabilities().getIngress(), status.getDropProbabilities().getEgress());
            out.printf(Locale.ROOT, "jobs: %d installed, %d forming%n", status.getJobsCount(), status.getFormingJobsCount());
        });
        return 0;
    }
}
