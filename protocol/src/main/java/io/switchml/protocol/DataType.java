package io.switchml.protocol;

/** Element types the all-reduce carries. */
public enum DataType {
    /** float32, sent as block floating point (see {@link BlockQuantizer}). */
    FLOAT32,
    /** int32, sent as is; sums wrap around on overflow, as Java's int addition does. */
    INT32
}
