package io.switchml.spark;

import java.io.Serializable;
import java.util.Iterator;

/**
 * What every rank of a barrier stage runs ({@link BarrierAllReduce#run}): its partition's records, with the
 * stage's {@code AllReduce} already connected in {@code rank}. It is shipped to the executors, so it must be
 * serializable (a lambda that captures only serializable values is).
 *
 * @param <T> the records of the partition
 * @param <R> what the rank returns to the driver (serializable)
 */
@FunctionalInterface
public interface RankFunction<T, R extends Serializable> extends Serializable {
    R apply(RankContext rank, Iterator<T> partition) throws Exception;
}
