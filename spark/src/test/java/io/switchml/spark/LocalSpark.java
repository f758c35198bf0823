package io.switchml.spark;

import org.apache.spark.sql.SparkSession;

/** A Spark session in this JVM for the tests: {@code local[...]} master, loopback only, no web UI. */
final class LocalSpark {
    private LocalSpark() {
    }

    static SparkSession start(String master) {
        return SparkSession.builder().master(master).appName("switchml-spark-test")
                .config(SparkSessions.loopbackDriver())
                .config("spark.scheduler.barrier.maxConcurrentTasksCheck.interval", "1s")
                .config("spark.scheduler.barrier.maxConcurrentTasksCheck.maxFailures", "1")
                .getOrCreate();
    }
}
