package io.switchml.agent;

import io.switchml.api.AllReduce;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One rank's worker for a local process (PyTorch's DDP comm hook): joins the job, then serves the
 * all-reduces the process asks for over a Unix-domain socket, on tensors it put in the shared memory.
 *
 * <p>The conversation, one line each way at a time:
 * <pre>
 * agent:   HELLO ALGORITHM RANK WORKERS ENDPOINTS     (ENDPOINTS "-" for the switch)
 * process: JOIN PEERS                                 (every rank's ENDPOINTS, comma-separated)
 * agent:   READY RANK WORKERS                         (or FAIL REASON)
 * process: R ID OFFSET COUNT sum|mean f32|i32         (any number in flight)
 * agent:   D ID                                       (in request order; or E ID REASON, then the agent leaves)
 * process: BYE                                        (the agent answers BYE once all are done, and leaves)
 * </pre>
 * When the process stays silent longer than the idle timeout, the agent leaves the job; when the
 * agent fails, it says why before it closes. When the process's end of the socket closes without BYE
 * (it died, was killed, or exited without closing its agent), the agent does <em>not</em> leave the
 * job: leaving says "this rank finished its steps", and the others would be told about uneven
 * steps. {@link #run} returns {@link #PROCESS_DIED} with the job still joined, and the agent's
 * process then ends without leaving ({@code Runtime.halt}), so the switch's controller sees this
 * rank's connection end and aborts the job, telling the other ranks that this rank died.
 */
public final class Agent {
    /** {@link #run}'s result when the local process went away without BYE; the job is left joined ({@link #abandonedJob}). */
    public static final int PROCESS_DIED = 3;

    private final AgentOptions options;
    private final PrintStream log;
    private final AtomicLong lastHeard = new AtomicLong(System.nanoTime());
    private final AtomicReference<String> failure = new AtomicReference<>();
    private SocketChannel channel;
    private volatile AllReduce abandoned;

    public Agent(AgentOptions options, PrintStream log) {
        this.options = options;
        this.log = log;
    }

    /**
     * Runs until the local process says BYE (returns 0), goes away, or the job fails (returns 1;
     * the reason is on the log and, where the socket is still open, sent to the process).
     */
    public int run() {
        try (SharedTensors shared = SharedTensors.create(options.sharedMemory(), options.sharedMemoryBytes());
             ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            Files.deleteIfExists(options.socket());
            server.bind(UnixDomainSocketAddress.of(options.socket()));
            log.println("switchml agent ready: rank " + options.rank() + " of " + options.workers() + ", " + options.algorithm()
                    + ", socket " + options.socket() + ", shared memory " + options.sharedMemory() + " (" + shared.bytes() + " bytes)");
            try (SocketChannel accepted = accept(server)) {
                channel = accepted;
                return serve(shared);
            } finally {
                Files.deleteIfExists(options.socket());
            }
        } catch (IOException | RuntimeException e) {
            log.println("switchml agent: rank " + options.rank() + ": " + describe(e));
            return 1;
        }
    }

    private SocketChannel accept(ServerSocketChannel server) throws IOException {
        server.configureBlocking(false);
        try (Selector selector = Selector.open()) {
            server.register(selector, SelectionKey.OP_ACCEPT);
            if (selector.select(options.connectTimeout().toMillis()) == 0) {
                throw new IllegalStateException("no process connected to " + options.socket() + " within " + options.connectTimeout());
            }
        }
        SocketChannel accepted = server.accept();
        accepted.configureBlocking(true);
        return accepted;
    }

    private int serve(SharedTensors shared) throws IOException {
        ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "agent-idle-watchdog"));
        BlockingQueue<Pending> inFlight = new LinkedBlockingQueue<>();
        Thread completer = daemon(() -> complete(inFlight), "agent-completer");
        AllReduce allReduce = null;
        try {
            long idleMs = options.idleTimeout().toMillis();
            watchdog.scheduleWithFixedDelay(() -> {
                if (System.nanoTime() - lastHeard.get() > TimeUnit.MILLISECONDS.toNanos(idleMs)) {
                    fail("the local process sent nothing for " + options.idleTimeout() + " (idle timeout)");
                }
            }, idleMs / 4 + 1, idleMs / 4 + 1, TimeUnit.MILLISECONDS);
            BufferedReader in = new BufferedReader(new InputStreamReader(Channels.newInputStream(channel), StandardCharsets.UTF_8));
            try {
                allReduce = JobJoin.open(options, endpoints -> {
                    send("HELLO " + options.algorithm() + " " + options.rank() + " " + options.workers() + " " + endpoints);
                    String joinLine = read(in);
                    if (joinLine == null || !joinLine.startsWith("JOIN ")) {
                        throw new IllegalStateException("expected 'JOIN PEERS' from the local process, got " + quote(joinLine));
                    }
                    return joinLine.substring(5).trim();
                });
            } catch (RuntimeException e) {
                send("FAIL " + oneLine(describe(e)));
                throw e;
            }
            send("READY " + allReduce.rank() + " " + allReduce.workers());
            completer.start();
            while (true) {
                String line = read(in);
                if (line == null) {
                    String why = failure.get();
                    if (why != null) {
                        log.println("switchml agent: rank " + options.rank() + ": " + why);
                        return 1;
                    }
                    log.println("switchml agent: rank " + options.rank() + ": the local process closed the connection"
                            + " without BYE (it died, was killed, or exited without closing its agent); ending this rank"
                            + " without leaving the job, so that the other ranks are told that it died");
                    abandoned = allReduce;
                    allReduce = null;
                    return PROCESS_DIED;
                }
                if (line.equals("BYE")) {
                    inFlight.add(Pending.BYE);
                    completer.join(options.operationTimeout().toMillis() * 2);
                    return failure.get() == null ? 0 : 1;
                }
                AgentRequest request = AgentRequest.parse(line);
                CompletableFuture<Void> future = request.floats()
                        ? allReduce.allReduceAsync(shared.floats(request.offset(), request.count()), shared.floats(request.offset(), request.count()), request.op())
                        : allReduce.allReduceAsync(shared.ints(request.offset(), request.count()), shared.ints(request.offset(), request.count()), request.op());
                inFlight.add(new Pending(request.id(), future));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the completions to be sent", e);
        } catch (RuntimeException | IOException e) {
            String why = failure.get();
            if (why != null) {
                log.println("switchml agent: rank " + options.rank() + ": " + why);
                return 1;
            }
            fail(describe(e));
            throw e;
        } finally {
            watchdog.shutdownNow();
            completer.interrupt();
            if (allReduce != null) {
                allReduce.close();
            }
        }
    }

    /**
     * The job {@link #run} left joined when it returned {@link #PROCESS_DIED}: the agent's process ends
     * without closing it; a caller that goes on living (a test) closes it.
     */
    public AllReduce abandonedJob() {
        return abandoned;
    }

    private String read(BufferedReader in) throws IOException {
        String line = in.readLine();
        lastHeard.set(System.nanoTime());
        return line;
    }

    /** Sends the completions in request order, each awaited for at most the operation timeout. */
    private void complete(BlockingQueue<Pending> inFlight) {
        try {
            while (true) {
                Pending p = inFlight.take();
                if (p == Pending.BYE) {
                    send("BYE");
                    return;
                }
                try {
                    p.future().get(options.operationTimeout().toMillis(), TimeUnit.MILLISECONDS);
                    lastHeard.set(System.nanoTime());
                    send("D " + p.id());
                } catch (ExecutionException e) {
                    fail("all-reduce " + p.id() + " failed: " + describe(e.getCause()), p.id());
                    return;
                } catch (TimeoutException e) {
                    fail("all-reduce " + p.id() + " did not complete within " + options.operationTimeout()
                            + " (operation timeout): a rank may have died or stopped", p.id());
                    return;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            fail("cannot answer the local process: " + e.getMessage());
        }
    }

    private void fail(String why) {
        fail(why, -1);
    }

    /** Records the first failure, tells the process why (for request {@code id}, or all), and closes the socket. */
    private void fail(String why, long id) {
        if (!failure.compareAndSet(null, why)) {
            return;
        }
        try {
            send((id >= 0 ? "E " + id + " " : "FAIL ") + oneLine(why));
        } catch (IOException | RuntimeException ignored) {
            // The process is gone already: nobody left to tell.
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // Closing is what we want; a failure to do so changes nothing.
        }
    }

    private synchronized void send(String line) throws IOException {
        ByteBuffer bytes = ByteBuffer.wrap((line + "\n").getBytes(StandardCharsets.UTF_8));
        while (bytes.hasRemaining()) {
            channel.write(bytes);
        }
    }

    private static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    private static String describe(Throwable e) {
        if (e instanceof UncheckedIOException u && u.getCause() != null) {
            e = u;
        }
        String message = e.getMessage();
        return message == null ? e.getClass().getSimpleName() : message;
    }

    private static String oneLine(String s) {
        return s.replace('\n', ' ').replace('\r', ' ');
    }

    private static String quote(String s) {
        return s == null ? "end of stream" : "'" + s + "'";
    }

    private record Pending(long id, CompletableFuture<Void> future) {
        static final Pending BYE = new Pending(-1, null);
    }
}
