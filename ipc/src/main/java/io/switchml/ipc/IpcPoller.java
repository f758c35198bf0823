package io.switchml.ipc;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The idle strategy of one reader of the shared-memory port, on the single-threaded loop that also
 * serves its UDP socket (a Netty event loop is one; this module knows it only as a
 * {@link ScheduledExecutorService}). While there is work it polls again at once (a task queued behind the
 * loop's I/O); after {@code spinNanos} without work it posts its {@link SleepNotice}, looks once more,
 * and sleeps: it queues nothing and costs no CPU. A writer that finds the flag set sends a one-byte
 * datagram (the doorbell) to the reader's UDP socket, whose handler calls {@link #wake}. A backstop
 * timer wakes it as well, in case a doorbell is lost; it then looks once and sleeps again.
 *
 * <p>Everything but {@link #start} and {@link #close} runs on the event loop.
 */
public final class IpcPoller implements Runnable {
    /**
     * How long a reader polls after work before sleeping unless its settings say otherwise ({@code ipcSpinMicros}
     * of the worker's and the switch's settings): 50 µs, a round trip through the switch, on a host with 4 cores or
     * more; none below, where a spinning reader takes the CPU from the worker or switch it waits for (on 2 cores a
     * 4 KiB all-reduce of 4 workers took 3.1 ms spinning, 2.4 ms not; BENCHMARKS.md section 21).
     */
    public static long defaultSpinNanos() {
        return TimeUnit.MICROSECONDS.toNanos(Runtime.getRuntime().availableProcessors() >= 4 ? 50 : 0);
    }
    /** A sleeping reader looks this often even without a doorbell. */
    public static final long DEFAULT_BACKSTOP_NANOS = TimeUnit.MILLISECONDS.toNanos(100);

    /** Bytes of the doorbell datagram; no packet of the switch protocol is this short. */
    public static final int DOORBELL_BYTES = 1;

    /** The reader's work: returns how many items it handled. */
    @FunctionalInterface
    public interface Source {
        int poll();
    }

    private final ScheduledExecutorService loop;
    private final Source source;
    private final Consumer<InternalError> faults;
    private final SleepNotice flag;
    private final long spinNanos;
    private final long backstopNanos;
    private final Runnable backstopTask = () -> wake(false);
    private long lastWorkAt;
    private boolean asleep;
    private volatile boolean closed;
    private ScheduledFuture<?> backstop;

    /**
     * @param faults what the reader does with a fault on a mapped page (the JVM's SIGBUS, when a file shrank under the
     *               mapping): the JVM raises it after the access that caused it, wherever the thread is then, so it can
     *               reach the poller outside {@code source}; the handler throws it on when it is not the files' fault,
     *               and polling goes on otherwise
     */
    public IpcPoller(ScheduledExecutorService loop, Source source, Consumer<InternalError> faults, SleepNotice flag, long spinNanos,
                     long backstopNanos) {
        this.loop = loop;
        this.source = source;
        this.faults = faults;
        this.flag = flag;
        this.spinNanos = spinNanos;
        this.backstopNanos = backstopNanos;
    }

    public IpcPoller(ScheduledExecutorService loop, Source source, Consumer<InternalError> faults, SleepNotice flag, long spinNanos) {
        this(loop, source, faults, flag, spinNanos, DEFAULT_BACKSTOP_NANOS);
    }

    /** A reader whose files nothing truncates (a fault is not handled). */
    public IpcPoller(ScheduledExecutorService loop, Source source, SleepNotice flag, long spinNanos, long backstopNanos) {
        this(loop, source, late -> {
            throw late;
        }, flag, spinNanos, backstopNanos);
    }

    /** Starts polling; safe from any thread. */
    public void start() {
        loop.execute(() -> {
            lastWorkAt = System.nanoTime();
            run();
        });
    }

    @Override
    public void run() {
        try {
            poll();
        } catch (InternalError late) {
            faults.accept(late);
            if (!closed) {
                asleep = false;
                loop.execute(this);
            }
        }
    }

    private void poll() {
        if (closed || asleep) {
            return;
        }
        if (source.poll() > 0) {
            lastWorkAt = System.nanoTime();
            loop.execute(this);
            return;
        }
        if (closed) {
            return; // the source closed this poller (its file is gone): its flag is not touched again
        }
        if (System.nanoTime() - lastWorkAt < spinNanos) {
            loop.execute(this);
            return;
        }
        flag.sleep();
        if (source.poll() > 0) {
            flag.awake();
            lastWorkAt = System.nanoTime();
            loop.execute(this);
            return;
        }
        asleep = true;
        backstop = loop.schedule(backstopTask, backstopNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * A doorbell rang ({@code doorbell}) or the backstop fired: polls now. After a doorbell the
     * reader spins again, as more work is likely; after the backstop it looks once.
     */
    public void wake(boolean doorbell) {
        if (awakenGuarded(doorbell)) {
            run();
        }
    }

    /** {@link #awaken}, with a late fault handled (the reader is awake then). */
    private boolean awakenGuarded(boolean doorbell) {
        try {
            return awaken(doorbell);
        } catch (InternalError late) {
            faults.accept(late);
            asleep = false;
            return !closed;
        }
    }

    /** Whether it was asleep; if so it is awake now, its backstop cancelled. */
    private boolean awaken(boolean doorbell) {
        if (closed || !asleep) {
            return false;
        }
        asleep = false;
        if (backstop != null) {
            backstop.cancel(false);
            backstop = null;
        }
        flag.awake();
        lastWorkAt = doorbell ? System.nanoTime() : System.nanoTime() - spinNanos;
        return true;
    }

    /**
     * The reader's own side just asked for work to come back (a worker sent packets): it polls for
     * the next {@code spinNanos} rather than wait for a wake-up. On the event loop; the first poll is
     * queued behind the caller, never run inside it: the caller is sending (a flush), and results
     * handed to it in the middle of that would reach a lane still starting the task they finish.
     */
    public void workExpected() {
        if (awakenGuarded(true)) {
            loop.execute(this);
        } else {
            lastWorkAt = System.nanoTime();
        }
    }

    /** Stops polling; a task already queued returns at once. Safe from any thread. */
    public void close() {
        closed = true;
        try {
            loop.execute(() -> {
                if (backstop != null) {
                    backstop.cancel(false);
                    backstop = null;
                }
            });
        } catch (RejectedExecutionException shutDown) {
            // The loop is gone, and its scheduled backstop with it.
        }
    }
}
