package io.switchml.cli;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import io.switchml.launch.AllReduceAlgorithm;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

import java.io.PrintWriter;
import java.util.Iterator;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code switchml algorithms}: the registered all-reduce algorithms ({@link AllReduceAlgorithm}), the names that
 * {@code bench --algo}, {@code train --aggregation}, {@code torchrun --algo} and Spark take.
 */
@Command(name = "algorithms", mixinStandardHelpOptions = true,
        description = "List the registered all-reduce algorithms: the names --algo and --aggregation take, whether each"
                + " needs a switch, and what it does. A jar on the class path registers more (docs/ARCHITECTURE.md section 1).")
final class AlgorithmsCommand implements Callable<Integer> {
    @Option(names = "--format", defaultValue = "text", description = "text or json (default: ${DEFAULT-VALUE}).")
    String format;

    private static final Gson GSON = new GsonBuilder().disableHtmlEscaping().create();

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        switch (format) {
            case "text" -> {
                for (AllReduceAlgorithm a : AllReduceAlgorithm.all()) {
                    out.println(String.format(Locale.ROOT, "%-10s %-14s %s", a.id(),
                            a.needsSwitch() ? "needs a switch" : "no switch", a.summary()));
                }
            }
            case "json" -> {
                for (AllReduceAlgorithm a : AllReduceAlgorithm.all()) {
                    out.println(GSON.toJson(new Row(a.id(), a.needsSwitch(), a.compressed(),
                            a.summary(), a.getClass().getName())));
                }
            }
            default -> throw new IllegalArgumentException("--format must be text or json, not " + format);
        }
        out.flush();
        return 0;
    }

    /** One algorithm as a JSON line. */
    private record Row(String id, boolean needsSwitch, boolean compressed, String summary, String implementation) {
    }

    /** The registered names, for picocli's {@code ${COMPLETION-CANDIDATES}} in option texts. */
    static final class Names implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return AllReduceAlgorithm.all().stream().map(AllReduceAlgorithm::id).iterator();
        }
    }
}
