package io.switchml.launch;

import java.security.CodeSource;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;

/**
 * The one table of {@link AllReduceAlgorithm}s, loaded once with {@link ServiceLoader} from every jar on the
 * class path (this module's built-ins and any others), through this module's class loader and the thread's
 * context class loader (a Spark executor's user jars). Two algorithms of one name are an error that names
 * both classes, not a silent choice.
 */
final class AlgorithmRegistry {
    private static volatile Map<String, AllReduceAlgorithm> byId;

    private AlgorithmRegistry() {
    }

    static AllReduceAlgorithm named(String name) {
        return find(name).orElseThrow(() ->
                new IllegalArgumentException("unknown all-reduce algorithm '" + name + "'; known: " + ids()));
    }

    static Optional<AllReduceAlgorithm> find(String name) {
        return Optional.ofNullable(table().get(name == null ? "" : name.trim().toLowerCase(Locale.ROOT)));
    }

    static List<AllReduceAlgorithm> all() {
        return List.copyOf(table().values());
    }

    static String ids() {
        return String.join(", ", table().keySet());
    }

    private static Map<String, AllReduceAlgorithm> table() {
        Map<String, AllReduceAlgorithm> table = byId;
        if (table == null) {
            synchronized (AlgorithmRegistry.class) {
                table = byId;
                if (table == null) {
                    table = load();
                    byId = table;
                }
            }
        }
        return table;
    }

    /** Whether it came with this module (from the same jar or class directory as the interface). */
    private static boolean builtIn(AllReduceAlgorithm a) {
        return Objects.equals(location(a.getClass()), location(AllReduceAlgorithm.class));
    }

    private static String location(Class<?> type) {
        CodeSource source = type.getProtectionDomain().getCodeSource();
        return source == null || source.getLocation() == null ? null : source.getLocation().toString();
    }

    private static Map<String, AllReduceAlgorithm> load() {
        List<AllReduceAlgorithm> found = new ArrayList<>();
        ClassLoader own = AllReduceAlgorithm.class.getClassLoader();
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        try {
            ServiceLoader.load(AllReduceAlgorithm.class, own).forEach(found::add);
            if (context != null && context != own) {
                ServiceLoader.load(AllReduceAlgorithm.class, context).forEach(found::add);
            }
        } catch (ServiceConfigurationError e) {
            throw new IllegalStateException("cannot load the registered all-reduce algorithms: " + e.getMessage(), e);
        }
        Map<String, AllReduceAlgorithm> table = new LinkedHashMap<>();
        // Stable: the built-ins in their own file's order, switchml first, then the others as the class path gave them.
        found.sort(Comparator.comparing((AllReduceAlgorithm a) -> !a.id().equals(SwitchMlAlgorithm.ID))
                .thenComparing(a -> !builtIn(a)));
        for (AllReduceAlgorithm a : found) {
            String id = a.id();
            if (id == null || !id.equals(id.trim().toLowerCase(Locale.ROOT)) || id.isEmpty() || id.contains(",")) {
                throw new IllegalStateException("all-reduce algorithm " + a.getClass().getName() + " has an invalid id '"
                        + id + "' (lower case, no commas)");
            }
            AllReduceAlgorithm before = table.putIfAbsent(id, a);
            if (before != null && before.getClass() != a.getClass()) {
                throw new IllegalStateException("two all-reduce algorithms are named '" + id + "': "
                        + before.getClass().getName() + " and " + a.getClass().getName());
            }
        }
        if (!table.containsKey(SwitchMlAlgorithm.ID)) {
            throw new IllegalStateException("the built-in all-reduce algorithms are not registered (no "
                    + "META-INF/services/" + AllReduceAlgorithm.class.getName() + " of switchml-launch on the class path)");
        }
        return Collections.unmodifiableMap(table);
    }
}
