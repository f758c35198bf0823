package io.switchml.launch;

import io.switchml.client.SwitchMLConfig;

import java.util.List;
import java.util.Map;

/** Where {@code switchml} workers find their switch, as worker settings. */
public final class SwitchSettings {
    private SwitchSettings() {
    }

    /**
     * One controller: {@code switchml.controller}; several: one switch sharded over them, {@code switchml.shards}
     * (docs/ARCHITECTURE.md section 10); none: no settings.
     */
    public static Map<String, String> of(List<String> controllers) {
        if (controllers.isEmpty()) {
            return Map.of();
        }
        return controllers.size() == 1 ? Map.of(SwitchMLConfig.Key.CONTROLLER.property(), controllers.get(0))
                : Map.of(SwitchMLConfig.Key.SHARDS.property(), String.join(";", controllers));
    }
}
