package io.switchml.cli;

import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;

/** One run of the {@code switchml} command in this JVM: its exit code, what it printed and its errors. */
record Run(int exitCode, String out, String err) {
    static Run of(String... args) {
        PrintStream saved = System.out;
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        StringWriter err = new StringWriter();
        CommandLine cl = SwitchMlCommand.commandLine();
        cl.setErr(new PrintWriter(err, true));
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        int code;
        try {
            code = cl.execute(args);
        } finally {
            System.setOut(saved);
        }
        return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString());
    }
}
