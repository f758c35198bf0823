package io.switchml.examples;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The guides show the examples' code as it is compiled and run here, imports included: docs/java-and-djl.md the DJL
 * and plain all-reduce programs, docs/spark.md the Spark ones. (The markers in the sources keep their README: names.)
 */
class ReadmeSnippetsTest {
    private static final Path JAVA_GUIDE = Path.of("..", "docs", "java-and-djl.md");
    private static final Path SPARK_GUIDE = Path.of("..", "docs", "spark.md");
    private static final Path SOURCES = Path.of("src", "main", "java", "io", "switchml", "examples");

    @Test
    void theDjlSnippetAndItsImportsAreTheExamplesOwn() throws IOException {
        String readme = Files.readString(JAVA_GUIDE);
        String source = Files.readString(SOURCES.resolve("DjlTraining.java"));
        assertThat(readme).contains(region(source, "djl"));
        for (String line : source.lines().filter(l -> l.startsWith("import ")).toList()) {
            assertThat(readme).as("the guide's imports").contains(line);
        }
    }

    @Test
    void thePlainAllReduceSnippetIsTheExamplesOwn() throws IOException {
        String readme = Files.readString(JAVA_GUIDE);
        String source = Files.readString(SOURCES.resolve("PlainAllReduce.java"));
        assertThat(readme).contains(region(source, "plain"));
        assertThat(readme).contains("import io.switchml.client.SwitchMLContext;", "import io.switchml.api.ReduceOp;");
    }

    @Test
    void theSparkSnippetsAndTheirImportsAreTheExamplesOwn() throws IOException {
        String readme = Files.readString(SPARK_GUIDE);
        String source = Files.readString(SOURCES.resolve("SparkFashionMnist.java"));
        assertThat(readme).contains(region(source, "spark"), region(source, "barrier"));
        for (String line : source.lines().filter(l -> l.startsWith("import io.switchml")).toList()) {
            assertThat(readme).as("the guide's imports").contains(line);
        }
    }

    /** The lines between {@code // README:name:begin} and {@code :end}, without their common indentation. */
    static String region(String source, String name) {
        List<String> lines = source.lines().toList();
        int begin = indexOf(lines, "// README:" + name + ":begin");
        int end = indexOf(lines, "// README:" + name + ":end");
        List<String> body = lines.subList(begin + 1, end);
        int indent = body.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length())
                .min().orElse(0);
        StringBuilder text = new StringBuilder();
        for (String line : body) {
            text.append(line.isBlank() ? "" : line.substring(indent)).append('\n');
        }
        return text.toString();
    }

    private static int indexOf(List<String> lines, String marker) {
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).strip().equals(marker)) {
                return i;
            }
        }
        throw new AssertionError("no line '" + marker + "' in the example");
    }
}
