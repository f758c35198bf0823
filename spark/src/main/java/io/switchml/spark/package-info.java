/**
 * Ranks as the tasks of one Spark barrier stage (docs/spark.md): {@link io.switchml.spark.BarrierAllReduce}
 * (rank = partition, a job and a job secret per stage attempt, the switch embedded in the driver or given) and
 * DJL training from a {@code Dataset<Row>} ({@link io.switchml.spark.SparkTraining}). Spark is {@code provided}.
 */
package io.switchml.spark;
