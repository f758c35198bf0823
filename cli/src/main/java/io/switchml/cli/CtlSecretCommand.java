package io.switchml.cli;

import io.switchml.control.ControlChannel;
import io.switchml.controller.proto.IssueJobSecretRequest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code switchml ctl secret NAME}: has the switch issue a job's secret (the operator's command). */
@Command(name = "secret", mixinStandardHelpOptions = true,
        description = "Have the switch issue a fresh secret for a job name: until the switch restarts, every rank that joins"
                + " a job of that name must present it (switchml.jobSecretFile). Writes it to --out (readable by its owner"
                + " only), or prints it.")
final class CtlSecretCommand implements Callable<Integer> {
    @ParentCommand
    CtlCommand ctl;

    @Parameters(index = "0", paramLabel = "NAME", description = "The job's name.")
    String job;

    @Option(names = "--out", paramLabel = "FILE", description = "Write the secret to this file instead of printing it.")
    Path out;

    @Override
    public Integer call() throws IOException {
        String secret;
        try (ControlChannel controller = ctl.connect()) {
            secret = controller.call("issue a secret for job '" + job + "'", ctl.timeout(),
                    stub -> stub.issueJobSecret(IssueJobSecretRequest.newBuilder().setJobName(job).build())).getSecret();
        }
        if (out != null) {
            PrivateFiles.write(out, secret + "\n");
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("job", job);
        json.put(out != null ? "file" : "secret", out != null ? out.toString() : secret);
        ctl.output().print(json, o -> o.println(out != null ? "secret of job '" + job + "' written to " + out
                : secret));
        return 0;
    }
}
