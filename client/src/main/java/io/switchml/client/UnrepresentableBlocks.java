package io.switchml.client;

/** What an all-reduce learnt about blocks that held NaN, infinities or |x| >= 2^127. */
final class UnrepresentableBlocks {
    private int blocks;
    private int firstFrom = -1;
    private int firstTo;
    private String localElement;

    synchronized void note(int from, int to, String localElementOrNull) {
        blocks++;
        if (firstFrom < 0 || from < firstFrom) {
            firstFrom = from;
            firstTo = to;
        }
        if (localElement == null && localElementOrNull != null) {
            localElement = localElementOrNull;
        }
    }

    /** The error message, or null when every block was representable. */
    synchronized String describe(String operation) {
        if (blocks == 0) {
            return null;
        }
        return operation + ": " + blocks + " block(s), the first covering elements [" + firstFrom + ", " + firstTo
                + "), held NaN, an infinity or a value with |x| >= 2^127 on at least one worker"
                + (localElement != null ? " (this worker: " + localElement + ")" : " (not on this worker)")
                + "; block floating point cannot carry such values, so those output elements are NaN"
                + " and all others are exact. Fix the input (e.g. clip or check gradients) and retry.";
    }
}
