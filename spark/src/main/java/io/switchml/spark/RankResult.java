package io.switchml.spark;

import java.io.Serializable;

/** A rank's return value on its way to the driver, which orders them by rank. */
record RankResult<R extends Serializable>(int rank, R value) implements Serializable {
    private static final long serialVersionUID = 1L;
}
