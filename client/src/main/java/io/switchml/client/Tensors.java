package io.switchml.client;

/** Argument checks shared by every all-reduce entry point. */
final class Tensors {
    private Tensors() {
    }

    static void checkOutput(int inputLength, int outputCapacity) {
        if (outputCapacity < inputLength) {
            throw new IllegalArgumentException("output holds " + outputCapacity
                    + " elements but the input has " + inputLength);
        }
    }
}
