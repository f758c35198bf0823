package io.switchml.agent;

import io.switchml.client.SwitchMLConfig;
import io.switchml.launch.AllReduceAlgorithm;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The agent's command line ({@code switchml agent}, or this class's {@link #main} on the agent module's own class
 * path, which is how switchml_torch starts it). Parsed here rather than with picocli: the agent starts once per
 * rank, and picocli's classes (Java 5 class files) can be neither kept in a class-data archive nor verified
 * quickly, which cost a third of the agent's start-up CPU (docs/pytorch.md, start-up).
 */
public final class AgentCommand {
    /** One option: its name, the name of its value in the help, its default (null: none), what it is. */
    private record Option(String name, String value, String defaultValue, boolean required, String description) {
    }

    private static final List<Option> OPTIONS = List.of(
            new Option("--algo", "ALGO", "switchml", false, "a registered all-reduce algorithm: " + AllReduceAlgorithm.ids() + "."),
            new Option("--rank", "RANK", null, true, "This worker's rank in the job (its host's index where the host's ranks share it)."),
            new Option("--workers", "N", null, true, "Workers in the job (hosts, where each host's ranks share one agent)."),
            new Option("--local-ranks", "R,R,...", null, false,
                    "The launch's ranks this agent serves, in the order their tensors are summed. Default: --rank alone."),
            new Option("--ranks", "N", null, false, "Ranks in the whole launch (a MEAN divides by them). Default: --workers."),
            new Option("--controller", "HOST:PORT", null, false, "The switch's controller (switchml)."),
            new Option("--job", "NAME", null, false, "The job's name at the switch (switchml)."),
            new Option("--socket", "PATH", null, true, "The Unix-domain socket to listen on."),
            new Option("--shm", "PATH", null, true, "Shared memory file to create and map, e.g. under /dev/shm."),
            new Option("--shm-bytes", "BYTES", "268435456", false, "Its size: room for the tensors in flight."),
            new Option("--set", "NAME=VALUE", null, false,
                    "A worker setting, with or without the switchml. prefix (e.g. elementsPerPacket=1024); repeatable."),
            new Option("--connect-timeout", "DURATION", "PT60S", false, "How long to wait for the process to connect."),
            new Option("--operation-timeout", "DURATION", "PT120S", false, "How long one all-reduce may take."),
            new Option("--idle-timeout", "DURATION", "PT30M", false,
                    "Leave the job when the process sends nothing for this long."));

    private AgentCommand() {
    }

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Parses {@code args}, runs the agent; returns the exit code (0: the process said BYE; 2: a bad command line). */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        AgentOptions options;
        try {
            options = parse(args);
        } catch (IllegalArgumentException e) {
            err.println("switchml agent: " + e.getMessage());
            err.println("Run switchml agent --help for the options.");
            return 2;
        }
        if (options == null) {
            out.print(help());
            return 0;
        }
        int code = new Agent(options, err).run();
        if (code == Agent.PROCESS_DIED) {
            // The local process died: end without leaving the job (no Leave, no orderly close of the
            // controller's connection), so the controller tells the other ranks that this rank died.
            err.flush();
            Runtime.getRuntime().halt(code);
        }
        return code;
    }

    /** The options, or null when the help was asked for. */
    static AgentOptions parse(String[] args) {
        Map<String, String> given = new HashMap<>();
        Map<String, String> settings = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("-h") || arg.equals("--help")) {
                return null;
            }
            int eq = arg.indexOf('=');
            String name = arg.startsWith("--") && eq > 0 ? arg.substring(0, eq) : arg;
            Option option = OPTIONS.stream().filter(o -> o.name().equals(name)).findFirst()
                    .orElseThrow(() -> new IllegalArgumentException("unknown option '" + arg + "'"));
            String value;
            if (eq > 0 && arg.startsWith("--")) {
                value = arg.substring(eq + 1);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new IllegalArgumentException(name + " needs a value (" + option.value() + ")");
            }
            if (name.equals("--set")) {
                int split = value.indexOf('=');
                if (split <= 0) {
                    throw new IllegalArgumentException("--set takes NAME=VALUE, not '" + value + "'");
                }
                String key = value.substring(0, split);
                settings.put(SwitchMLConfig.Key.named(key).property(), value.substring(split + 1));
            } else if (given.put(name, value) != null) {
                throw new IllegalArgumentException(name + " is given twice");
            }
        }
        for (Option o : OPTIONS) {
            if (o.required() && !given.containsKey(o.name())) {
                throw new IllegalArgumentException("missing " + o.name() + " " + o.value());
            }
            if (o.defaultValue() != null) {
                given.putIfAbsent(o.name(), o.defaultValue());
            }
        }
        int rank = integer("--rank", given.get("--rank"));
        int workers = integer("--workers", given.get("--workers"));
        given.putIfAbsent("--ranks", Integer.toString(workers));
        List<Integer> local = new ArrayList<>();
        for (String r : given.getOrDefault("--local-ranks", Integer.toString(rank)).split(",")) {
            local.add(integer("--local-ranks", r.trim()));
        }
        return new AgentOptions(given.get("--algo"), rank, workers,
                given.get("--controller"), given.get("--job"), Path.of(given.get("--socket")), Path.of(given.get("--shm")),
                number(given, "--shm-bytes"), settings, duration(given, "--connect-timeout"),
                duration(given, "--operation-timeout"), duration(given, "--idle-timeout"),
                new AgentOptions.LocalRanks(local, integer("--ranks", given.get("--ranks"))));
    }

    static String help() {
        StringBuilder help = new StringBuilder("""
                Usage: switchml agent --rank RANK --workers N --socket PATH --shm PATH [options]
                Join a job and serve its all-reduces to local processes (PyTorch ranks, package switchml_torch)
                through shared memory and a Unix-domain socket: one rank, or all of a host's ranks (--local-ranks),
                whose tensors it sums and sends as the host's one contribution. Leaves the job when every process
                says so; ends without leaving when one dies (the others are told).
                """);
        for (Option o : OPTIONS) {
            help.append(String.format("  %-32s %s%s%n", o.name() + " " + o.value(), o.description(),
                    o.defaultValue() == null ? "" : " Default: " + o.defaultValue() + "."));
        }
        return help.append(String.format("  %-32s %s%n", "-h, --help", "Show this help and exit.")).toString();
    }

    private static int integer(String name, String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " takes a whole number, not '" + value + "'");
        }
    }

    private static long number(Map<String, String> given, String name) {
        try {
            return Long.parseLong(given.get(name));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " takes a whole number, not '" + given.get(name) + "'");
        }
    }

    private static Duration duration(Map<String, String> given, String name) {
        try {
            return Duration.parse(given.get(name));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(name + " takes an ISO-8601 duration such as PT60S, not '" + given.get(name) + "'");
        }
    }
}
