package io.switchml.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code switchml train --spark-master}: the training as Spark barrier tasks, in this JVM ({@code local[2]}). */
class TrainOnSparkCommandTest {
    @Test
    void localModePrintsTheTrainingJsonWithIdenticalParameters() {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = SwitchMlCommand.commandLine().execute("train", "--spark-master", "local[2]", "--workers", "2", "--epochs", "1",
                    "--limit", "2000", "--batch-size", "32", "--format", "json");
        } finally {
            System.setOut(saved);
        }
        String json = out.toString(StandardCharsets.UTF_8).strip();
        assertThat(code).as(json).isZero();
        assertThat(json).startsWith("{").contains("\"aggregation\": \"switchml\"", "\"workers\": 2", "\"epochs\": 1",
                "\"parameters_identical\": true", "\"test_accuracy\": 0.");
    }

    @Test
    void trainingAloneOrInTheRackIsNotForSpark() {
        for (String[] args : new String[][]{
                {"train", "--spark-master", "local[2]", "--aggregation", "none"},
                {"train", "--spark-master", "local[2]", "--framework", "tensorflow"},
                {"train", "--spark-master", "local[2]", "--rank", "0", "--controller", "127.0.0.1:50099"}}) {
            StringWriter err = new StringWriter();
            CommandLine cli = SwitchMlCommand.commandLine();
            cli.setErr(new PrintWriter(err));
            assertThat(cli.execute(args)).isNotZero();
            assertThat(err.toString()).contains("--spark-master");
        }
    }
}
