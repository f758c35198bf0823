package io.switchml.cli;

import io.switchml.client.SwitchMLConfig;
import picocli.CommandLine.Option;

import java.util.LinkedHashMap;
import java.util.Map;

/** Options that tune the workers, shared by bench, worker, train and demo. */
final class WorkerTuning {
    @Option(names = "--elements-per-packet", description = "int32 elements per packet (default auto: the largest that fits"
            + " the path's MTU, 15360 on loopback; SwitchML hardware: 64 or 256).")
    Integer elementsPerPacket;

    @Option(names = "--window", description = "Slots each worker thread keeps in flight (default auto: about 512 KiB of"
            + " packets, 8 to 64 slots).")
    Integer window;

    @Option(names = "--threads", description = "Worker threads per worker, each with its own UDP port and slots (default 1).")
    Integer threads;

    @Option(names = "--transport", description = "How workers reach the switch: auto (the switch's shared-memory port for"
            + " workers on its host, else UDP), udp or ipc (default auto).")
    String transport;

    @Option(names = "--lanes", paramLabel = "BITS", description = "Bits per float32 value on the switch's wire: 32, or 16"
            + " (two values per 32-bit element: half the bytes, 14 bits of a block's largest value at 2 workers, 8 at 128)"
            + " (default 32).")
    Integer lanes;

    @Option(names = "--operation-timeout-ms", description = "An all-reduce taking longer fails (default 60000).")
    Long operationTimeoutMs;

    @Option(names = "--set", description = "Any worker setting NAME=VALUE (see the worker settings in docs/configuration.md), e.g. --set retransmitMinMs=5; repeatable.")
    Map<String, String> extra = new LinkedHashMap<>();

    /** The {@code switchml.*} settings these options give (only those set). */
    Map<String, String> settings() {
        Map<String, String> s = SwitchMLConfig.Key.properties(extra);
        put(s, SwitchMLConfig.Key.ELEMENTS_PER_PACKET, elementsPerPacket);
        put(s, SwitchMLConfig.Key.SLOTS_PER_THREAD, window);
        put(s, SwitchMLConfig.Key.THREADS, threads);
        put(s, SwitchMLConfig.Key.OPERATION_TIMEOUT_MS, operationTimeoutMs);
        put(s, SwitchMLConfig.Key.TRANSPORT, transport);
        put(s, SwitchMLConfig.Key.LANES, lanes);
        return s;
    }

    private static void put(Map<String, String> s, SwitchMLConfig.Key key, Object value) {
        if (value != null) {
            s.put(key.property(), value.toString());
        }
    }
}
