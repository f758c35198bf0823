package io.switchml.controller;

import java.io.OutputStream;
import java.io.PrintStream;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * What a test's switch writes to its log while this is open: the bytes and lines of standard error (where
 * slf4j-simple writes) and of every record that reaches java.util.logging's root (where gRPC logs), as its
 * console handler would format them. The lines still go where they went.
 */
final class LogBytes implements AutoCloseable {
    private final PrintStream original = System.err;
    private final AtomicLong bytes = new AtomicLong();
    private final AtomicLong lines = new AtomicLong();
    private final Logger root = Logger.getLogger("");
    private final Handler jul = new Handler() {
        private final SimpleFormatter format = new SimpleFormatter();

        @Override
        public void publish(LogRecord record) {
            count(format.format(record));
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    LogBytes() {
        root.getHandlers(); // java.util.logging's console handler keeps the standard error it finds now
        root.addHandler(jul);
        System.setErr(new PrintStream(new OutputStream() {
            @Override
            public void write(int b) {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                bytes.addAndGet(len);
                for (int i = off; i < off + len; i++) {
                    if (b[i] == '\n') {
                        lines.incrementAndGet();
                    }
                }
                original.write(b, off, len);
            }
        }, true));
    }

    private void count(String text) {
        bytes.addAndGet(text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length);
        lines.addAndGet(text.chars().filter(c -> c == '\n').count());
    }

    long bytes() {
        return bytes.get();
    }

    long lines() {
        return lines.get();
    }

    @Override
    public void close() {
        System.setErr(original);
        root.removeHandler(jul);
    }
}
