package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A late fault of the mapped files in the loop's I/O step is handed to the port, not allowed to end its thread. */
class LateFaultGuardTest {
    /** An I/O handler whose steps throw what the test says, and count. */
    private static final class ScriptedIo implements IoHandler {
        RuntimeException runtime;
        Error error;
        int runs;
        int wakeups;

        @Override
        public int run(IoHandlerContext context) {
            runs++;
            if (error != null) {
                throw error;
            }
            if (runtime != null) {
                throw runtime;
            }
            return 7;
        }

        @Override
        public IoRegistration register(IoHandle handle) {
            throw new UnsupportedOperationException("not in this test");
        }

        @Override
        public void wakeup() {
            wakeups++;
        }

        @Override
        public boolean isCompatible(Class<? extends IoHandle> handleType) {
            return handleType == IoHandle.class;
        }
    }

    @Test
    void aLateFaultGoesToThePortAndTheLoopGoesOnAnythingElseGoesOn() {
        ScriptedIo io = new ScriptedIo();
        List<InternalError> handed = new ArrayList<>();
        IoHandlerFactory factory = LateFaultGuard.guard(executor -> io, late -> handed.add(late));
        IoHandler guarded = factory.newHandler(null);

        assertThat(guarded.run(null)).as("delegates").isEqualTo(7);
        InternalError fault = new InternalError("a fault occurred in a recent unsafe memory access operation");
        io.error = fault;
        assertThat(guarded.run(null)).as("nothing was processed; the loop runs on").isZero();
        assertThat(handed).containsExactly(fault);

        io.error = new OutOfMemoryError("not the files'");
        assertThatThrownBy(() -> guarded.run(null)).isInstanceOf(OutOfMemoryError.class);
        io.error = null;
        io.runtime = new IllegalStateException("a bug");
        assertThatThrownBy(() -> guarded.run(null)).isInstanceOf(IllegalStateException.class);
        guarded.wakeup();
        assertThat(io.wakeups).isEqualTo(1);
        assertThat(guarded.isCompatible(IoHandle.class)).isTrue();
        assertThat(io.runs).isEqualTo(4);
    }

    @Test
    void aPortWithoutSharedMemoryLetsTheFaultEndTheStepAsBefore() {
        ScriptedIo io = new ScriptedIo();
        io.error = new InternalError("no files here");
        IoHandler guarded = LateFaultGuard.guard(executor -> io, late -> false).newHandler(null);
        assertThatThrownBy(() -> guarded.run(null)).isSameAs(io.error);
    }
}
