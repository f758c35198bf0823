package io.switchml.spark;

import java.util.Map;

/** Spark settings this module's users and tests share. */
public final class SparkSessions {
    private SparkSessions() {
    }

    /** The driver on loopback (executors on this host only), without its web UI. */
    public static Map<String, Object> loopbackDriver() {
        return Map.of("spark.driver.host", "127.0.0.1", "spark.driver.bindAddress", "127.0.0.1", "spark.ui.enabled", "false");
    }
}
