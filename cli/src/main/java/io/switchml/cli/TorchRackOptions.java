package io.switchml.cli;

import io.switchml.launch.Rack;
import picocli.CommandLine.Option;

/**
 * Where {@code torchrun} and {@code torch-train} start their Python ranks: on this host, or with {@code --rack} each
 * in its own namespace of the emulated rack (docs/ARCHITECTURE.md section 7), or {@code --ranks-per-host} of them in
 * each, so that DDP's traffic, Gloo's or the switch's, crosses links shaped to {@code --rate}.
 */
final class TorchRackOptions {
    @Option(names = "--rack", description = "Run every rank in its own network namespace of the emulated rack (needs"
            + " root), behind a link shaped with tc tbf to --rate, the switch on the rack's fabric; removed afterwards.")
    boolean rack;

    @Option(names = "--rate", description = "With --rack: the line rate of every link, a tc rate such as 1gbit.")
    String rate;

    @Option(names = "--mtu", defaultValue = "9000", description = "With --rack: the MTU of every link (default: ${DEFAULT-VALUE}).")
    int mtu;

    @Option(names = "--ranks-per-host", paramLabel = "R", defaultValue = "1", description = "With --rack: hosts of R ranks"
            + " each, one namespace and one link per host; the host's ranks share one agent, which sends one contribution"
            + " per host (default: ${DEFAULT-VALUE}).")
    int ranksPerHost;

    /** The rack to build for {@code workers} ranks, or null to run them on this host. */
    Rack.Spec spec(int workers, String controller) {
        if (!rack) {
            if (rate != null || ranksPerHost != 1) {
                throw new IllegalArgumentException((rate != null ? "--rate" : "--ranks-per-host") + " needs --rack");
            }
            return null;
        }
        if (rate == null) {
            throw new IllegalArgumentException("--rack needs --rate, e.g. --rate 1gbit");
        }
        if (controller != null) {
            throw new IllegalArgumentException("--rack starts its own switch on the rack's fabric; drop --controller");
        }
        return new Rack.Spec(workers, Rack.parseRate(rate), mtu, 0, 0, 0, ranksPerHost);
    }
}
