package io.switchml.agent;

import io.switchml.api.AllReduce;
import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchMLException;
import io.switchml.api.Tensors;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A JVM rank's all-reduce through its host's agent (docs/ARCHITECTURE.md section 16): the Java side of the agent's
 * protocol (see {@link Agent}), as switchml_torch speaks it for PyTorch. Each tensor is copied into a free part of
 * this rank's region of the shared memory ({@link RegionSpace}; a tensor larger than half the region goes in parts),
 * the agent is asked with one line, and its answer, in request order, has the result in the same place, copied to the
 * caller's output. Barriers and broadcasts are int32 all-reduces: every rank but the root adds zeros.
 *
 * <p>Every wait is bounded: the start by the connect timeout (the host's agent waits as long for every local rank,
 * then as long for the job to form), each all-reduce by the operation timeout from its submission, which also covers a local rank
 * that never asks for its share of a round. An agent that fails says why, and every all-reduce in flight and later
 * fails with its reason.
 */
public final class AgentClient implements AllReduce {
    /** Beyond the agent's own timeouts at the start, how long a rank waits to hear why the agent gave up. */
    private static final Duration ANSWER_MARGIN = Duration.ofSeconds(5);
    private final int rank;
    private final int ranks;
    private final SocketChannel channel;
    private final BufferedReader in;
    private final ByteBuffer region;
    private final Duration operationTimeout;
    private final AutoCloseable owned;
    private final RegionSpace space;
    private final ArrayDeque<Request> inFlight = new ArrayDeque<>();
    private final CompletableFuture<Void> byeAnswered = new CompletableFuture<>();
    private final ScheduledExecutorService watchdog;
    private final Object submitting = new Object();
    private long nextId;
    private String failure;
    private boolean closed;

    /** One part of a tensor in flight: where it lies in the region and where its result goes. */
    private record Request(long id, long offset, Buffer out, long sent, CompletableFuture<Void> done) {
    }

    private AgentClient(int rank, int ranks, SocketChannel channel, BufferedReader in, ByteBuffer region,
                        Duration operationTimeout, AutoCloseable owned) {
        this.rank = rank;
        this.ranks = ranks;
        this.channel = channel;
        this.in = in;
        this.region = region;
        this.operationTimeout = operationTimeout;
        this.owned = owned;
        this.space = new RegionSpace(region.capacity());
        this.watchdog = Executors.newSingleThreadScheduledExecutor(r -> AgentLines.daemon(r, "agent-client-watchdog-rank-" + rank));
        long period = Math.max(50, operationTimeout.toMillis() / 10);
        watchdog.scheduleWithFixedDelay(this::checkOldest, period, period, TimeUnit.MILLISECONDS);
        AgentLines.daemon(this::readAnswers, "agent-client-rank-" + rank).start();
    }

    /**
     * Connects rank {@code rank} (of the launch's {@code ranks}) to the agent at {@code socket}, retrying until the agent
     * listens, and returns once the agent joined the job. {@code owned} (the agent itself, where this process runs it)
     * is closed after this client.
     *
     * @param start            how long the agent may take to listen, to hear from every local rank and to join the job
     * @param operationTimeout how long one all-reduce may take from its submission
     */
    public static AgentClient connect(Path socket, Path sharedMemory, int rank, int ranks, Duration start,
                                      Duration operationTimeout, AutoCloseable owned) {
        SocketChannel channel = reach(socket, System.nanoTime() + start.toNanos());
        // A blocking Unix-domain channel has no read timeout: the guard closes it if the start takes too long. The agent
        // waits for the host's ranks, then for the job, each as long, and says why when it gives up: hear it first.
        Duration answer = start.multipliedBy(2).plus(ANSWER_MARGIN);
        ScheduledExecutorService guard = Executors.newSingleThreadScheduledExecutor(r -> AgentLines.daemon(r, "agent-client-start"));
        guard.schedule(() -> AgentLines.close(channel), answer.toMillis(), TimeUnit.MILLISECONDS);
        try {
            BufferedReader in = new BufferedReader(new InputStreamReader(Channels.newInputStream(channel), StandardCharsets.UTF_8));
            AgentLines.send(channel, "RANK " + rank);
            String[] hello = expect(in, "HELLO", 5, "its HELLO (it waits for every rank of this host to connect)", start);
            if (!hello[4].equals("-")) {
                throw new SwitchMLException("the host's agent runs " + hello[1] + ", which exchanges endpoints between"
                        + " hosts; a JVM rank's host aggregation runs algorithms that need only the switch (switchml)");
            }
            AgentLines.send(channel, "JOIN -");
            String[] ready = expect(in, "READY", 5, "READY (it joins the job once every host's agent is there)", start);
            long offset = Long.parseLong(ready[3]);
            long bytes = Long.parseLong(ready[4]);
            ByteBuffer region;
            try (FileChannel file = FileChannel.open(sharedMemory, StandardOpenOption.READ, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS)) {
                MappedByteBuffer mapped = file.map(FileChannel.MapMode.READ_WRITE, offset, bytes);
                region = mapped.order(ByteOrder.nativeOrder());
            }
            guard.shutdownNow();
            return new AgentClient(rank, ranks, channel, in, region, operationTimeout, owned);
        } catch (IOException | RuntimeException e) {
            boolean silent = !channel.isOpen();
            AgentLines.close(channel);
            String why = e instanceof SwitchMLException ? e.getMessage() : "rank " + rank + " could not start with its"
                    + " host's agent (" + socket + "): " + (silent ? "no answer within " + answer
                    + " (twice the connect timeout and a margin): " + Agent.describe(e) : Agent.describe(e));
            throw new SwitchMLException(why, e);
        } finally {
            guard.shutdownNow();
        }
    }

    /** Connects to the socket, waiting for the agent to bind it. */
    private static SocketChannel reach(Path socket, long deadline) {
        while (true) {
            try {
                SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
                try {
                    channel.connect(UnixDomainSocketAddress.of(socket));
                    return channel;
                } catch (IOException e) {
                    channel.close();
                    if (System.nanoTime() - deadline >= 0) {
                        throw new SwitchMLException("the host's agent did not listen on " + socket + " in time (connect"
                                + " timeout): the host's first rank runs it; did it start? (" + Agent.describe(e) + ")", e);
                    }
                }
                Thread.sleep(20);
            } catch (IOException e) {
                throw new SwitchMLException("cannot open a Unix-domain socket: " + Agent.describe(e), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SwitchMLException("interrupted while waiting for the host's agent at " + socket, e);
            }
        }
    }

    private static String[] expect(BufferedReader in, String word, int fields, String what, Duration start) throws IOException {
        String line = in.readLine();
        if (line == null) {
            throw new IOException("the host's agent closed the connection before " + what + " (within " + start + ")");
        }
        if (line.startsWith("FAIL ")) {
            throw new SwitchMLException("the host's agent failed: " + line.substring(5));
        }
        String[] f = line.split(" ");
        if (!f[0].equals(word) || f.length != fields) {
            throw new IOException("expected " + what + " from the host's agent, got '" + line + "'");
        }
        return f;
    }

    @Override
    public int rank() {
        return rank;
    }

    @Override
    public int workers() {
        return ranks;
    }

    @Override
    public CompletableFuture<Void> allReduceAsync(FloatBuffer in, FloatBuffer out, ReduceOp op) {
        Tensors.checkOutput(in.remaining(), out.remaining());
        return submit(in.slice(), out.slice(), op, true);
    }

    @Override
    public CompletableFuture<Void> allReduceAsync(IntBuffer in, IntBuffer out, ReduceOp op) {
        Tensors.checkOutput(in.remaining(), out.remaining());
        return submit(in.slice(), out.slice(), op, false);
    }

    /** Sends {@code in} in parts that fit half the region; the future completes when every part's result is in {@code out}. */
    private CompletableFuture<Void> submit(Buffer in, Buffer out, ReduceOp op, boolean floats) {
        int count = in.remaining();
        if (count == 0) {
            // Every rank submits the same sizes, so every rank skips it alike: nothing to ask the agent.
            return CompletableFuture.completedFuture(null);
        }
        int partElements = (int) Math.min(Integer.MAX_VALUE, space.largest() / 4);
        List<CompletableFuture<Void>> parts = new ArrayList<>();
        synchronized (submitting) {
            for (int from = 0; from < count; from += partElements) {
                int n = Math.min(partElements, count - from);
                parts.add(submitPart(in.slice(from, n), out.slice(from, n), op, floats));
            }
        }
        return parts.size() == 1 ? parts.get(0) : CompletableFuture.allOf(parts.toArray(CompletableFuture[]::new));
    }

    private CompletableFuture<Void> submitPart(Buffer in, Buffer out, ReduceOp op, boolean floats) {
        int n = in.remaining();
        CompletableFuture<Void> done = new CompletableFuture<>();
        long offset;
        long id;
        synchronized (inFlight) {
            long deadline = System.nanoTime() + operationTimeout.toNanos();
            while ((offset = failure == null && !closed ? space.take((long) n * 4) : 0) < 0) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (left <= 0) {
                    return CompletableFuture.failedFuture(new SwitchMLException("rank " + rank + ": no room in the shared"
                            + " memory for " + n + " elements within " + operationTimeout + " (operation timeout): the"
                            + " all-reduces before it did not complete"));
                }
                try {
                    inFlight.wait(left);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return CompletableFuture.failedFuture(new SwitchMLException("interrupted while waiting for room in the"
                            + " shared memory", e));
                }
            }
            if (failure != null || closed) {
                return CompletableFuture.failedFuture(new SwitchMLException(failure != null ? failure
                        : "rank " + rank + "'s all-reduce through its host's agent is closed"));
            }
            id = nextId++;
        }
        // Copied without the lock, so that the answers to earlier requests are not held up meanwhile; one submitter at a
        // time (submit's lock) keeps requests in the order of their space and numbers.
        ByteBuffer at = region.slice((int) offset, n * 4).order(ByteOrder.nativeOrder());
        if (floats) {
            at.asFloatBuffer().put((FloatBuffer) in);
        } else {
            at.asIntBuffer().put((IntBuffer) in);
        }
        synchronized (inFlight) {
            if (failure != null) {
                return CompletableFuture.failedFuture(new SwitchMLException(failure));
            }
            inFlight.addLast(new Request(id, offset, out, System.nanoTime(), done));
        }
        try {
            AgentLines.send(channel, new AgentRequest(id, offset, n, op, floats).toLine());
        } catch (IOException e) {
            fail("rank " + rank + " cannot reach its host's agent: " + Agent.describe(e));
        }
        return done;
    }

    /** Reads the agent's answers until the end: D (done) and E (failed) in request order, FAIL, BYE. */
    private void readAnswers() {
        try {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("D ")) {
                    completeOldest(Long.parseLong(line.substring(2).trim()));
                } else if (line.startsWith("E ")) {
                    int space = line.indexOf(' ', 2);
                    fail("all-reduce failed at the host's agent: " + (space < 0 ? line : line.substring(space + 1)));
                } else if (line.startsWith("FAIL ")) {
                    fail("the host's agent failed: " + line.substring(5));
                } else if (line.equals("BYE")) {
                    byeAnswered.complete(null);
                } else {
                    fail("the host's agent said '" + line + "', which is not part of its protocol");
                }
            }
            fail("the host's agent closed the connection (its process died, or it stopped)");
        } catch (IOException | RuntimeException e) {
            fail("cannot read the host's agent's answers: " + Agent.describe(e));
        }
    }

    private void completeOldest(long id) {
        Request r;
        synchronized (inFlight) {
            r = inFlight.peekFirst();
            if (r == null || r.id() != id) {
                throw new IllegalStateException("the host's agent answered request " + id + ", expected "
                        + (r == null ? "none" : String.valueOf(r.id())));
            }
        }
        int n = r.out().remaining();
        ByteBuffer at = region.slice((int) r.offset(), n * 4).order(ByteOrder.nativeOrder());
        if (r.out() instanceof FloatBuffer f) {
            f.duplicate().put(at.asFloatBuffer());
        } else {
            ((IntBuffer) r.out()).duplicate().put(at.asIntBuffer());
        }
        synchronized (inFlight) {
            inFlight.removeFirst();
            space.giveBack();
            inFlight.notifyAll();
        }
        r.done().complete(null);
    }

    /** Fails every all-reduce in flight when the oldest has waited longer than the operation timeout. */
    private void checkOldest() {
        Request oldest;
        synchronized (inFlight) {
            oldest = inFlight.peekFirst();
        }
        if (oldest != null && System.nanoTime() - oldest.sent() > operationTimeout.toNanos()) {
            fail("rank " + rank + "'s all-reduce " + oldest.id() + " did not complete within " + operationTimeout
                    + " (operation timeout): another rank of this host may not have asked for it, or a rank of another"
                    + " host died or stopped");
        }
    }

    private void fail(String why) {
        List<Request> failed;
        synchronized (inFlight) {
            if (failure == null) {
                failure = why;
            }
            failed = new ArrayList<>(inFlight);
            inFlight.clear();
            inFlight.notifyAll();
        }
        AgentLines.close(channel);
        byeAnswered.completeExceptionally(new SwitchMLException(failure));
        for (Request r : failed) {
            r.done().completeExceptionally(new SwitchMLException(failure));
        }
    }

    @Override
    public void barrier() {
        allReduce(new int[1], ReduceOp.SUM);
    }

    @Override
    public byte[] broadcast(byte[] value, int root) {
        if (root < 0 || root >= ranks) {
            throw new IllegalArgumentException("root " + root + " is not a rank in 0.." + (ranks - 1));
        }
        int[] length = {rank == root ? value.length : 0};
        allReduce(length, ReduceOp.SUM);
        ByteBuffer bytes = ByteBuffer.allocate((length[0] + 3) / 4 * 4);
        if (rank == root) {
            bytes.put(value).rewind();
        }
        int[] words = new int[bytes.capacity() / 4];
        bytes.asIntBuffer().get(words);
        allReduce(words, ReduceOp.SUM);
        bytes.clear();
        bytes.asIntBuffer().put(words);
        byte[] result = new byte[length[0]];
        bytes.get(result);
        return result;
    }

    /**
     * Says BYE once this rank's all-reduces are done and waits for the agent's answer (the agent leaves the job once
     * every local rank has), then closes what it owns.
     */
    @Override
    public void close() {
        synchronized (inFlight) {
            if (closed) {
                return;
            }
            closed = true;
        }
        try {
            if (failure == null) {
                AgentLines.send(channel, "BYE");
                byeAnswered.get(operationTimeout.toMillis(), TimeUnit.MILLISECONDS);
            }
        } catch (Exception e) {
            // The agent is gone or failed: nothing left to say goodbye to; what it said is in the failures.
        } finally {
            AgentLines.close(channel);
            watchdog.shutdownNow();
            try {
                if (owned != null) {
                    owned.close();
                }
            } catch (Exception e) {
                throw new SwitchMLException("closing rank " + rank + "'s host agent failed: " + Agent.describe(e), e);
            }
        }
    }
}
