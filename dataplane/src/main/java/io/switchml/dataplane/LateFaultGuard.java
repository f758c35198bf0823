package io.switchml.dataplane;

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;

import java.util.function.Predicate;

/**
 * A switch port thread's I/O handler, guarded against the late fault of the shared-memory port's mapped files: the
 * JVM raises the SIGBUS of a page that is gone (a file a process of the switch's user truncated) as an
 * {@link InternalError} after the access, on whatever the thread runs then, which can be the event loop's own I/O
 * step; there it would end the thread, and the port with it, UDP included. The guard hands such an error to the
 * port's shared-memory side ({@link IpcPort#lateFault}), which stops reading the broken file, and the loop goes on;
 * any other error goes on as before.
 */
final class LateFaultGuard implements IoHandler {
    private final IoHandler io;
    private final Predicate<InternalError> taken;

    private LateFaultGuard(IoHandler io, Predicate<InternalError> taken) {
        this.io = io;
        this.taken = taken;
    }

    /** {@code factory}'s handlers, guarded; {@code taken} says whether a late fault was the files' (then it is handled). */
    static IoHandlerFactory guard(IoHandlerFactory factory, Predicate<InternalError> taken) {
        return new IoHandlerFactory() {
            @Override
            public IoHandler newHandler(io.netty.util.concurrent.ThreadAwareExecutor executor) {
                return new LateFaultGuard(factory.newHandler(executor), taken);
            }

            @Override
            public boolean isChangingThreadSupported() {
                return factory.isChangingThreadSupported();
            }
        };
    }

    @Override
    public int run(IoHandlerContext context) {
        try {
            return io.run(context);
        } catch (InternalError late) {
            if (!taken.test(late)) {
                throw late;
            }
            return 0;
        }
    }

    @Override
    public void initialize() {
        io.initialize();
    }

    @Override
    public void prepareToDestroy() {
        io.prepareToDestroy();
    }

    @Override
    public void destroy() {
        io.destroy();
    }

    @Override
    public IoRegistration register(IoHandle handle) throws Exception {
        return io.register(handle);
    }

    @Override
    public void wakeup() {
        io.wakeup();
    }

    @Override
    public boolean isCompatible(Class<? extends IoHandle> handleType) {
        return io.isCompatible(handleType);
    }
}
