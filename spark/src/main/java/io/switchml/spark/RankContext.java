package io.switchml.spark;

import io.switchml.api.AllReduce;
import org.apache.spark.BarrierTaskContext;

/**
 * One rank of a barrier stage, as its {@link RankFunction} sees it.
 *
 * @param rank      the task's partition id
 * @param workers   the stage's number of tasks (its partitions)
 * @param attempt   the stage attempt ({@link BarrierTaskContext#stageAttemptNumber()}): 0, then 1, ... when Spark
 *                  retries the stage after a task failed
 * @param job       the job name at the switch, unique to this stage attempt
 * @param allReduce the connected all-reduce of the stage's ranks; closed by {@link BarrierAllReduce} afterwards
 * @param barrier   Spark's barrier context ({@code barrier()}, {@code allGather()}, task infos)
 */
public record RankContext(int rank, int workers, int attempt, String job, AllReduce allReduce, BarrierTaskContext barrier) {
}
