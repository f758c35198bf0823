package io.switchml.control;

import io.grpc.netty.shaded.io.netty.util.internal.logging.InternalLogger;
import io.grpc.netty.shaded.io.netty.util.internal.logging.InternalLoggerFactory;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;

/**
 * Keeps one line per connection out of the log (security round 5: every line a caller can cause is bounded): gRPC
 * sets TCP's SO_KEEPALIVE on every connection, also on the Unix-domain control socket's ({@link ControlSockets}),
 * where Netty cannot set it and says so once per connection, on the switch and on the client ("Unknown channel
 * option 'SO_KEEPALIVE'"). The filter drops that warning of gRPC's shaded Netty bootstraps and passes everything
 * else on. It must be installed before gRPC's first channel or server (Netty's bootstraps take their loggers once).
 */
public final class NettyLogFilter {
    private static boolean installed;

    private NettyLogFilter() {
    }

    /** Idempotent; call before the process's first gRPC channel or server (Netty's bootstraps take their loggers once). */
    public static synchronized void install() {
        if (installed) {
            return;
        }
        installed = true;
        InternalLoggerFactory delegate = InternalLoggerFactory.getDefaultFactory();
        java.lang.reflect.Method create;
        try {
            create = InternalLoggerFactory.class.getDeclaredMethod("newInstance", String.class);
            create.setAccessible(true); // the factory's own, protected: its static getInstance would come back here
        } catch (ReflectiveOperationException | RuntimeException e) {
            return; // Netty's warnings stay as they are
        }
        InternalLoggerFactory.setDefaultFactory(new InternalLoggerFactory() {
            @Override
            protected InternalLogger newInstance(String name) {
                InternalLogger logger;
                try {
                    logger = (InternalLogger) create.invoke(delegate, name);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException("cannot make Netty's logger " + name, e);
                }
                if (!name.endsWith(".bootstrap.ServerBootstrap") && !name.endsWith(".bootstrap.Bootstrap")) {
                    return logger;
                }
                return (InternalLogger) Proxy.newProxyInstance(InternalLogger.class.getClassLoader(),
                        new Class<?>[] {InternalLogger.class}, (proxy, method, args) -> {
                            if (method.getName().equals("warn") && args != null && args.length > 1
                                    && args[0] instanceof String format && format.startsWith("Unknown channel option")
                                    && java.util.Arrays.deepToString(args).contains("SO_KEEPALIVE")) {
                                return null;
                            }
                            try {
                                return method.invoke(logger, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        });
            }
        });
    }
}
