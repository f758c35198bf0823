package io.switchml.api;

/** How the workers' tensors are combined. */
public enum ReduceOp {
    /** Element-wise sum. */
    SUM,
    /**
     * Element-wise mean: the sum divided by the number of workers (for int32, Java's integer
     * division, which truncates toward zero).
     */
    MEAN
}
