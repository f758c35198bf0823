package io.switchml.cli;

import io.grpc.Status;
import io.switchml.control.ControlChannel;
import io.switchml.api.ControlPlaneException;
import io.switchml.controller.proto.LeaveRequest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code switchml ctl end-session NUMBER}: ends a SwitchML session (SwitchML's own workers, which
 * carry no credentials, so only the operator can end theirs), or any job, and frees its slots. The operator is
 * the holder of the switch's token, or on the switch's host its own user or root (docs/security.md).
 */
@Command(name = "end-session", mixinStandardHelpOptions = true,
        description = "End the SwitchML session, or any job, installed as job number NUMBER (see `switchml ctl jobs`) and"
                + " free its slots; the operator's command (--token-file, or run on the switch's host as the switch's own"
                + " user or root).")
final class CtlEndSessionCommand implements Callable<Integer> {
    @ParentCommand
    CtlCommand ctl;

    @Parameters(index = "0", paramLabel = "NUMBER", description = "The session's job number.")
    int number;

    @Override
    public Integer call() {
        try (ControlChannel controller = ctl.connect()) {
            controller.call("end the SwitchML session of job number " + number, ctl.timeout(),
                    stub -> stub.leave(LeaveRequest.newBuilder().setJobNumber(number).build()));
        } catch (ControlPlaneException e) {
            if (Status.fromThrowable(e.getCause()).getCode() == Status.Code.NOT_FOUND) {
                throw new ControlPlaneException("job number " + number + " is no SwitchML session this caller may end: only"
                        + " the operator ends sessions and jobs (give the switch's operator token with --token-file, or set"
                        + " SWITCHML_TOKEN, or run ctl on the switch's host as the switch's own user or root), and"
                        + " `switchml ctl jobs` lists the job numbers", e);
            }
            throw e;
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("ended", number);
        ctl.output().print(json, o -> o.println("SwitchML session of job number " + number + " ended"));
        return 0;
    }
}
