package io.switchml.client;

import io.switchml.api.ReduceOp;
import io.switchml.control.WorkerCounter;
import io.switchml.controller.MetricsOptions;
import io.switchml.controller.SwitchMetrics;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.switchml.controller.MetricsScrape.scrape;
import static io.switchml.controller.MetricsScrape.value;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A real job's ranks appear in the switch's Prometheus metrics with what they did: the all-reduces they
 * finished, at least a tensor's bytes each way per all-reduce, a result for each packet sent (retransmissions aside).
 */
class JobMetricsTest {
    private static final int ALL_REDUCES = 5;
    private static final int ELEMENTS = 64 * 1024;
    /** The distribution's monitoring files, in the source tree (the tests run in this module's directory). */
    private static final Path DIST_CONF = Path.of("..", "dist", "src", "conf");
    private static final Pattern METRIC = Pattern.compile("\\b(switchml|jvm|process)_[a-z_]+\\b");

    @Test
    void aJobsRanksReportWhatTheyDidAsSeries() throws Exception {
        try (LocalCluster cluster = new LocalCluster(2);
             SwitchMetrics metrics = SwitchMetrics.start(cluster.service, new MetricsOptions("127.0.0.1", 0))) {
            cluster.onEveryWorker((rank, context) -> {
                for (int i = 0; i < ALL_REDUCES; i++) {
                    float[] values = new float[ELEMENTS];
                    if (i < ALL_REDUCES - 1) {
                        java.util.Arrays.fill(values, 1f); // the last all-reduce is of zeros, which the job skips
                    }
                    context.allReduce(values, ReduceOp.SUM);
                }
                return null;
            });
            String job = Integer.toString(cluster.contexts.get(0).jobNumber());
            // Ranks report about once a second: wait (bounded) for reports made after the last all-reduce.
            String text = awaitSeries(metrics.port(), job, Duration.ofSeconds(20));
            for (int rank = 0; rank < 2; rank++) {
                String labels = "{job_number=\"" + job + "\",rank=\"" + rank + "\"}";
                assertThat(value(text, "switchml_rank_all_reduces_total" + labels)).isEqualTo(ALL_REDUCES);
                double fresh = value(text, "switchml_rank_packets_sent_total" + labels)
                        - value(text, "switchml_rank_retransmissions_total" + labels);
                assertThat(fresh).isPositive();
                assertThat(value(text, "switchml_rank_packets_received_total" + labels))
                        .as("a packet's slot completes only with a result").isGreaterThanOrEqualTo(fresh);
                assertThat(value(text, "switchml_rank_sent_bytes_total" + labels))
                        .isGreaterThanOrEqualTo((ALL_REDUCES - 1) * ELEMENTS * 4.0);
                assertThat(value(text, "switchml_rank_received_bytes_total" + labels))
                        .isGreaterThanOrEqualTo((ALL_REDUCES - 1) * ELEMENTS * 4.0);
                assertThat(value(text, "switchml_rank_zero_blocks_skipped_total" + labels))
                        .isEqualTo(Math.ceil(ELEMENTS / (double) TestDefaults.ELEMENTS_PER_PACKET));
                for (WorkerCounter counter : WorkerCounter.values()) { // declared once, exported from the declaration
                    assertThat(text).as("%s for rank %d", counter, rank)
                            .contains("switchml_rank_" + counter.id() + "_total" + labels + " ");
                }
                assertThat(value(text, "switchml_rank_failovers_total" + labels)).isZero();
            }
            // What the distribution's dashboard and alerts query is what the switch exports.
            for (String conf : List.of("switchml-dashboard.json", "switchml-alerts.yml")) {
                Matcher names = METRIC.matcher(Files.readString(DIST_CONF.resolve(conf)));
                while (names.find()) {
                    assertThat(text).as(conf + " queries " + names.group()).containsPattern("(?m)^" + names.group() + "[{ ]");
                }
            }
        }
    }

    /** The scrape once both ranks have reported all their all-reduces; fails naming what it waited for. */
    private static String awaitSeries(int port, String job, Duration limit) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        String text = "";
        while (System.nanoTime() < deadline) {
            text = scrape(port);
            if (reported(text, job, 0) && reported(text, job, 1)) {
                return text;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("within " + limit + " the ranks of job " + job + " did not report " + ALL_REDUCES
                + " all-reduces each; last scrape:\n" + text);
    }

    private static boolean reported(String text, String job, int rank) {
        String series = "switchml_rank_all_reduces_total{job_number=\"" + job + "\",rank=\"" + rank + "\"} ";
        return text.lines().anyMatch(l -> l.startsWith(series) && Double.parseDouble(l.substring(series.length())) >= ALL_REDUCES);
    }
}
