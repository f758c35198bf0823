package io.switchml.ipc;

import java.lang.invoke.VarHandle;
import org.agrona.concurrent.AtomicBuffer;

/**
 * One side of the shared-memory port says it is going to sleep; the other, after writing, wakes
 * it once. Dekker's pattern: the sleeper stores the flag and then looks for work again; the
 * writer stores its work and then reads the flag, a full fence between, so that at least one of
 * them sees the other's store and no wake-up is lost.
 */
public final class WakeFlag implements SleepNotice {
    private static final int AWAKE = 0;
    private static final int ASLEEP = 1;

    private final AtomicBuffer buffer;
    private final int index;

    WakeFlag(AtomicBuffer buffer, int index) {
        this.buffer = buffer;
        this.index = index;
    }

    @Override
    public void sleep() {
        buffer.putIntVolatile(index, ASLEEP);
    }

    @Override
    public void awake() {
        buffer.putIntOrdered(index, AWAKE);
    }

    /** Whether the flag says asleep now. */
    public boolean asleep() {
        return buffer.getIntVolatile(index) == ASLEEP;
    }

    /**
     * After the writer published its work: true exactly once per sleep, for the writer that must
     * send the wake-up.
     */
    public boolean takeWakeUp() {
        return takeWakeUp(buffer, index);
    }

    /** {@link #takeWakeUp()} on the flag at {@code index}, for a writer that keeps no flag object. */
    static boolean takeWakeUp(AtomicBuffer buffer, int index) {
        VarHandle.fullFence();
        return buffer.getIntVolatile(index) == ASLEEP && buffer.compareAndSetInt(index, ASLEEP, AWAKE);
    }
}
