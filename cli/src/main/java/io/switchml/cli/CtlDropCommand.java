package io.switchml.cli;

import io.switchml.control.ControlChannel;
import io.switchml.controller.proto.DropProbabilities;
import io.switchml.controller.proto.SetDropProbabilitiesRequest;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code switchml ctl drop}: changes the switch's drop simulator while it runs. */
@Command(name = "drop", mixinStandardHelpOptions = true,
        description = "Set the switch's drop simulator while it runs: the probability of dropping each packet on arrival"
                + " (--ingress) and each result on departure (--egress), each in [0, 1). An option left out keeps its"
                + " value. Prints the probabilities now in effect.")
final class CtlDropCommand implements Callable<Integer> {
    @ParentCommand
    CtlCommand ctl;

    @Option(names = "--ingress", paramLabel = "P", description = "Probability of dropping a packet on arrival.")
    Double ingress;

    @Option(names = "--egress", paramLabel = "P", description = "Probability of dropping each result sent.")
    Double egress;

    @Override
    public Integer call() {
        CtlOutput output = ctl.output();
        if (ingress == null && egress == null) {
            throw new IllegalArgumentException("give --ingress P, --egress P or both");
        }
        // The controller checks the range, so that one rule holds for every client.
        SetDropProbabilitiesRequest.Builder request = SetDropProbabilitiesRequest.newBuilder();
        if (ingress != null) {
            request.setIngress(ingress);
        }
        if (egress != null) {
            request.setEgress(egress);
        }
        DropProbabilities now;
        try (ControlChannel controller = ctl.connect()) {
            now = controller.call("set the drop simulator", ctl.timeout(), stub -> stub.setDropProbabilities(request.build()));
        }
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("ingress", now.getIngress());
        json.put("egress", now.getEgress());
        output.print(json, out -> out.println("drop simulator: ingress " + now.getIngress() + ", egress " + now.getEgress()));
        return 0;
    }
}
