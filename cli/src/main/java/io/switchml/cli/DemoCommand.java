package io.switchml.cli;

import io.switchml.client.SwitchMLConfig;
import io.switchml.training.TrainPlan;
import io.switchml.training.TrainingSummary;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.time.Duration;
import java.util.concurrent.Callable;

/** The main job: an embedded switch and four worker processes train a Fashion-MNIST classifier through it. */
@Command(name = "demo", mixinStandardHelpOptions = true,
        description = "Start an embedded switch and worker processes that train a Fashion-MNIST classifier (DJL, PyTorch),"
                + " gradients summed in the switch; prints per-epoch progress and the test accuracy.")
final class DemoCommand implements Callable<Integer> {
    @Option(names = "--workers", defaultValue = "4", description = "Worker processes (default: ${DEFAULT-VALUE}).")
    int workers;

    @Mixin
    TrainOptions training;

    @Override
    public Integer call() throws InterruptedException {
        TrainPlan plan = training.plan();
        if (!plan.config().containsKey(SwitchMLConfig.Key.HOST_LAYOUT.property())) {
            // The demo shows the switch at work: every worker its own contribution, not one sum for this host.
            plan = plan.withConfig(SwitchMLConfig.Key.HOST_LAYOUT.property(), "");
        }
        System.out.println("switchml demo: " + workers + " worker processes train a 784-256-128-10 perceptron on Fashion-MNIST"
                + " (each on 1/" + workers + " of the " + (plan.trainLimit() > 0 ? plan.trainLimit() : 60000) + " training images), "
                + plan.epochs() + " epoch(s).");
        System.out.println("After every backward pass the workers' gradients are averaged through an embedded software switch"
                + " (aggregation: " + plan.aggregation() + "), so every worker applies the same update.\n");
        TrainingSummary summary = TrainCommand.run(plan, workers, null, Duration.ofHours(1), System.out);
        return summary.parametersIdentical() ? 0 : 2;
    }
}
