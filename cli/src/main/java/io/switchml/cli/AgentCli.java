package io.switchml.cli;

import io.switchml.agent.AgentCommand;
import picocli.CommandLine.Command;
import picocli.CommandLine.Unmatched;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code switchml agent}: the agent's own command line (AgentCommand parses it, also for its own main). */
@Command(name = "agent",
        description = {"Join a job as one rank and serve its all-reduces to a local process (PyTorch, package"
                + " switchml_torch) through shared memory and a Unix-domain socket.",
                "switchml agent --help lists its options."})
final class AgentCli implements Callable<Integer> {
    @Unmatched
    List<String> args = new ArrayList<>();

    @Override
    public Integer call() {
        return AgentCommand.run(args.toArray(String[]::new), System.out, System.err);
    }
}
