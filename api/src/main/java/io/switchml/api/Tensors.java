package io.switchml.api;

/** Argument checks shared by every all-reduce entry point. */
public final class Tensors {
    private Tensors() {
    }

    public static void checkOutput(int inputLength, int outputCapacity) {
        if (outputCapacity < inputLength) {
            throw new IllegalArgumentException("output holds " + outputCapacity
                    + " elements but the input has " + inputLength);
        }
    }
}
