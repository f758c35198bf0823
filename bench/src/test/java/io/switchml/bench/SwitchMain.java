package io.switchml.bench;

import io.switchml.controller.AggregationService;
import io.switchml.dataplane.SwitchConfig;

/**
 * The switch (with its controller) as a process of its own, for failure tests: binds 127.0.0.1 on
 * the given controller TCP port and dataplane UDP port (0: any free one), prints
 * {@code switch ready controller=P dataplane=U}, and runs until killed.
 */
public final class SwitchMain {
    private SwitchMain() {
    }

    public static void main(String[] args) throws InterruptedException {
        AggregationService service = AggregationService.start(
                new SwitchConfig().bindAddress("127.0.0.1").basePort(Integer.parseInt(args[1])), "127.0.0.1",
                Integer.parseInt(args[0]));
        System.out.println("switch ready controller=" + service.controllerPort() + " dataplane=" + service.dataplane().ports()[0]);
        System.out.flush();
        service.awaitTermination();
    }
}
