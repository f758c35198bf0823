package io.switchml.client;

/**
 * The packet size and window the in-process test clusters use unless a test sets its own: fixed,
 * so that the tests' sizes (around one packet, around one window) mean the same on every host,
 * whatever {@code auto} would choose for the path.
 */
final class TestDefaults {
    static final int ELEMENTS_PER_PACKET = 2048;
    static final int SLOTS_PER_THREAD = 64;

    private TestDefaults() {
    }
}
