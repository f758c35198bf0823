package io.switchml.agent;

import io.switchml.api.AllReduce;
import io.switchml.api.ReduceOp;
import io.switchml.launch.AllReduceAlgorithm;
import io.switchml.launch.WorkerConnection;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The worker of a host's local processes (PyTorch ranks): joins the job once for all of them, then serves the
 * all-reduces they ask for over a Unix-domain socket, on tensors they put in the shared memory, each in its own
 * region. Where several ranks share the agent (docs/ARCHITECTURE.md, "Hosts of several ranks"), their k-th requests
 * are one all-reduce: summed on this host ({@link LocalReduction}), sent to the job as this host's one
 * contribution, and the result written into every rank's tensor.
 *
 * <p>The conversation with each process, one line each way at a time:
 * <pre>
 * process: RANK R                                     (its rank in the launch)
 * agent:   HELLO ALGORITHM R RANKS ENDPOINTS          (once every local rank is connected; ENDPOINTS "-" for the switch)
 * process: JOIN PEERS                                 (every host's ENDPOINTS in job-rank order, comma-separated)
 * agent:   READY R RANKS OFFSET BYTES                 (its region of the shared memory; or FAIL REASON)
 * process: R ID OFFSET COUNT sum|mean f32|i32         (any number in flight; OFFSET inside its region)
 * agent:   D ID                                       (in request order; or E ID REASON, then the agent leaves)
 * process: BYE                                        (the agent answers BYE once its requests are done; it leaves
 *                                                      the job when every local process has said BYE)
 * </pre>
 * When the processes stay silent longer than the idle timeout, the agent leaves the job; when the agent fails, it
 * says why before it closes. When a process's end of the socket closes without BYE (it died, was killed, or exited
 * without closing its agent), the agent does <em>not</em> leave the job: leaving says "these ranks finished their
 * steps", and the others would be told about uneven steps. It tells the other local processes which rank died, and
 * {@link #run} returns {@link #PROCESS_DIED} with the job still joined; the agent's process then ends without leaving
 * ({@code Runtime.halt}), so the switch's controller sees this worker's connection end and aborts the job, telling
 * the other hosts.
 */
public final class Agent {
    /** {@link #run}'s result when a local process went away without BYE; the job is left joined ({@link #abandonedJob}). */
    public static final int PROCESS_DIED = 3;

    private final AgentOptions options;
    private final PrintStream log;
    private final AtomicLong lastHeard = new AtomicLong(System.nanoTime());
    private final AtomicReference<String> failure = new AtomicReference<>();
    private final CompletableFuture<Integer> outcome = new CompletableFuture<>();
    private final List<LocalProcess> processes = new CopyOnWriteArrayList<>();
    private final List<SocketChannel> connections = new CopyOnWriteArrayList<>();
    private volatile boolean attached;
    private volatile AllReduce abandoned;
    private volatile WorkerConnection joined;
    /** The job is this host alone and its algorithm sums exactly: the local sum is every round's result. */
    private final boolean oneHost;
    private static final CompletableFuture<Void> DONE = CompletableFuture.completedFuture(null);

    public Agent(AgentOptions options, PrintStream log) {
        this.options = options;
        this.log = log;
        this.oneHost = options.workers() == 1 && !AllReduceAlgorithm.named(options.algorithm()).compressed();
    }

    /**
     * Runs until every local process says BYE (returns 0), one goes away ({@link #PROCESS_DIED}), or the job fails
     * (returns 1; the reason is on the log and, where the sockets are still open, sent to the processes).
     */
    public int run() {
        AgentOptions.LocalRanks local = options.local();
        ScheduledExecutorService watchdog = Executors.newSingleThreadScheduledExecutor(r -> AgentLines.daemon(r, "agent-watchdog"));
        try (SharedTensors shared = SharedTensors.create(options.sharedMemory(), options.sharedMemoryBytes(), local.count());
             ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            Files.deleteIfExists(options.socket());
            server.bind(UnixDomainSocketAddress.of(options.socket()));
            log.println("switchml agent ready: " + who() + ", " + options.algorithm() + ", socket " + options.socket()
                    + ", shared memory " + options.sharedMemory() + " (" + local.count() + " x " + shared.bytes() + " bytes)");
            // A process that connects and says nothing must not hold the agent: the watchdog closes what is open.
            watchdog.schedule(() -> {
                if (!attached) {
                    fail(notConnected());
                }
            }, options.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
            try {
                attachAll(server);
                return serve(shared, watchdog);
            } finally {
                for (SocketChannel c : connections) {
                    AgentLines.close(c);
                }
                Files.deleteIfExists(options.socket());
            }
        } catch (IOException | RuntimeException e) {
            fail(describe(e));
            return 1;
        } finally {
            watchdog.shutdownNow();
        }
    }

    private String notConnected() {
        List<Integer> ranks = options.local().ranks();
        return processes.isEmpty() ? "no process connected to " + options.socket() + " within " + options.connectTimeout()
                : "only " + processes.size() + " of this host's " + ranks.size() + " processes " + ranks + " connected to "
                + options.socket() + " within " + options.connectTimeout();
    }

    private String who() {
        AgentOptions.LocalRanks local = options.local();
        String job = "job rank " + options.rank() + " of " + options.workers();
        return local.count() == 1 && local.meanIsTheJobs(options.workers()) ? "rank " + options.rank() + " of " + options.workers()
                : job + ", for ranks " + local.ranks() + " of the launch's " + local.launchRanks();
    }

    /** Accepts every local process, each saying its rank first. */
    private void attachAll(ServerSocketChannel server) throws IOException {
        List<Integer> ranks = options.local().ranks();
        boolean[] seen = new boolean[ranks.size()];
        long deadline = System.nanoTime() + options.connectTimeout().toNanos();
        server.configureBlocking(false);
        try (Selector selector = Selector.open()) {
            server.register(selector, SelectionKey.OP_ACCEPT);
            while (processes.size() < ranks.size()) {
                long left = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (failure.get() != null) {
                    throw new IllegalStateException(failure.get());
                }
                if (left <= 0 || selector.select(left) == 0) {
                    if (System.nanoTime() - deadline >= 0) {
                        // Told to those connected now: run's clean-up closes their connections before its catch could.
                        String why = notConnected();
                        fail(why);
                        throw new IllegalStateException(why);
                    }
                    continue;
                }
                selector.selectedKeys().clear();
                SocketChannel accepted = server.accept();
                if (accepted == null) {
                    continue;
                }
                connections.add(accepted);
                accepted.configureBlocking(true);
                processes.add(LocalProcess.attach(accepted, ranks, seen));
            }
        }
        processes.sort((a, b) -> Integer.compare(a.local, b.local));
        attached = true;
    }

    private int serve(SharedTensors shared, ScheduledExecutorService watchdog) throws IOException {
        BlockingQueue<Pending> inFlight = new LinkedBlockingQueue<>();
        AgentOptions.LocalRanks local = options.local();
        int cores = Runtime.getRuntime().availableProcessors();
        AllReduce allReduce = null;
        try (LocalReduction sums = new LocalReduction(local.count(), cores, "agent-local-sum");
             LocalReduction shares = new LocalReduction(local.count(), cores, "agent-local-result")) {
            long idleMs = options.idleTimeout().toMillis();
            watchdog.scheduleWithFixedDelay(() -> {
                if (System.nanoTime() - lastHeard.get() > TimeUnit.MILLISECONDS.toNanos(idleMs)) {
                    fail("the local processes sent nothing for " + options.idleTimeout() + " (idle timeout)");
                }
            }, idleMs / 4 + 1, idleMs / 4 + 1, TimeUnit.MILLISECONDS);
            try {
                WorkerConnection connection = JobJoin.open(options, this::greet);
                joined = connection;
                allReduce = connection.allReduce();
            } catch (RuntimeException e) {
                fail(describe(e));
                throw e;
            }
            for (LocalProcess p : processes) {
                p.send("READY " + p.rank + " " + local.launchRanks() + " " + shared.offset(p.local) + " " + shared.bytes());
            }
            AllReduce job = allReduce;
            LocalRounds rounds = new LocalRounds(local.ranks(), round -> inFlight.add(submit(job, shared, sums, round)));
            AgentLines.daemon(() -> complete(inFlight, shares), "agent-completer").start();
            for (LocalProcess p : processes) {
                AgentLines.daemon(() -> read(p, rounds, inFlight), "agent-reader-rank-" + p.rank).start();
            }
            int code = outcome.get();
            if (code == PROCESS_DIED) {
                abandoned = allReduce;
                allReduce = null;
            }
            return code;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while serving the local processes", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(describe(e.getCause()), e.getCause());
        } finally {
            if (allReduce != null) {
                allReduce.close();
            }
        }
    }

    /** HELLO to every local process; returns the peers of their JOIN lines, which must agree. */
    private String greet(String endpoints) throws IOException {
        int launchRanks = options.local().launchRanks();
        for (LocalProcess p : processes) {
            p.send("HELLO " + options.algorithm() + " " + p.rank + " " + launchRanks + " " + endpoints);
        }
        String peers = null;
        for (LocalProcess p : processes) {
            String line = heard(p.readLine());
            if (line == null || !line.startsWith("JOIN ")) {
                throw new IllegalStateException("expected 'JOIN PEERS' from rank " + p.rank + "'s process, got " + quote(line));
            }
            String theirs = line.substring(5).trim();
            if (peers != null && !peers.equals(theirs)) {
                throw new IllegalStateException("this host's processes name different peers: rank " + processes.get(0).rank
                        + " '" + peers + "', rank " + p.rank + " '" + theirs + "'");
            }
            peers = theirs;
        }
        return peers;
    }

    /** One process's requests, until it says BYE (and closes), goes away, or the agent fails. */
    private void read(LocalProcess p, LocalRounds rounds, BlockingQueue<Pending> inFlight) {
        boolean said = false;
        try {
            while (true) {
                String line = heard(p.readLine());
                if (line == null) {
                    if (!said) {
                        processGone(p);
                    }
                    return;
                }
                if (line.equals("BYE")) {
                    said = true;
                    rounds.bye(p.local);
                    inFlight.add(Pending.bye(p));
                } else {
                    rounds.offer(p.local, AgentRequest.parse(line));
                }
            }
        } catch (IOException | RuntimeException e) {
            fail(describe(e));
        }
    }

    /**
     * The host's all-reduce of {@code round}: the local sum, then the job's all-reduce of it, in place in the first region.
     * A job of one host (one worker) has no other host's sum to add: its all-reduce would only send the local sum through
     * the switch and back (quantised to the block's exponent on the way), so the local sum is the result
     * (docs/ARCHITECTURE.md section 16). Compressing algorithms still run: their result is not their input.
     */
    private Pending submit(AllReduce job, SharedTensors shared, LocalReduction sums, LocalRounds.Round round) {
        int n = processes.size();
        int divisor = round.op() == ReduceOp.MEAN && !options.local().meanIsTheJobs(options.workers()) ? options.local().launchRanks() : 1;
        ReduceOp op = divisor == 1 ? round.op() : ReduceOp.SUM;
        if (round.floats()) {
            FloatBuffer[] tensors = new FloatBuffer[n];
            for (int i = 0; i < n; i++) {
                tensors[i] = shared.floats(i, round.offsets()[i], round.count());
            }
            if (n > 1) {
                sums.sumFloats(tensors, round.count());
            }
            return new Pending(round, oneHost ? DONE : job.allReduceAsync(tensors[0], tensors[0], op), tensors, null,
                    divisor, null);
        }
        IntBuffer[] tensors = new IntBuffer[n];
        for (int i = 0; i < n; i++) {
            tensors[i] = shared.ints(i, round.offsets()[i], round.count());
        }
        if (n > 1) {
            sums.sumInts(tensors, round.count());
        }
        return new Pending(round, oneHost ? DONE : job.allReduceAsync(tensors[0], tensors[0], op), null, tensors, divisor,
                null);
    }

    /**
     * The job ({@link #PROCESS_DIED}) or this agent (the job left joined, {@link #abandonedJob}): a process went away
     * without BYE.
     */
    private void processGone(LocalProcess p) {
        if (failure.get() != null) {
            outcome.complete(1);
            return;
        }
        String why = "rank " + p.rank + " died: its process died or was killed, or exited without closing its agent (it"
                + " closed the connection without BYE)";
        log.println("switchml agent: " + who() + ": " + why + "; ending without leaving the job, so that the other"
                + " ranks are told that it died");
        if (failure.compareAndSet(null, why)) {
            for (LocalProcess other : processes) {
                if (other != p) {
                    tell(other, "FAIL this host's agent stopped because " + why + "; the agent ends without leaving the job,"
                            + " so that the ranks of other hosts are told too");
                }
            }
        }
        outcome.complete(PROCESS_DIED);
    }

    /**
     * The job's all-reduce this agent left joined when {@link #run} returned {@link #PROCESS_DIED}: the agent's process
     * ends without closing it; a caller that goes on living (a test) closes it.
     */
    public AllReduce abandonedJob() {
        return abandoned;
    }

    /** The job's connection once the agent joined it (null before): its packet size and counters. */
    WorkerConnection joined() {
        return joined;
    }

    private String heard(String line) {
        lastHeard.set(System.nanoTime());
        return line;
    }

    /**
     * Sends the completions in request order, each awaited for at most the operation timeout, once the result is in
     * every local rank's tensor; answers each BYE in its place; ends the agent after the last.
     */
    private void complete(BlockingQueue<Pending> inFlight, LocalReduction shares) {
        int byes = 0;
        try {
            while (true) {
                Pending p = inFlight.take();
                if (p.bye() != null) {
                    p.bye().send("BYE");
                    if (++byes == processes.size()) {
                        outcome.complete(failure.get() == null ? 0 : 1);
                        return;
                    }
                    continue;
                }
                long number = p.round().number();
                try {
                    p.future().get(options.operationTimeout().toMillis(), TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    fail("all-reduce " + number + " failed: " + describe(e.getCause()), p.round());
                    return;
                } catch (TimeoutException e) {
                    fail("all-reduce " + number + " did not complete within " + options.operationTimeout()
                            + " (operation timeout): a rank may have died or stopped", p.round());
                    return;
                }
                if (p.floats() != null && (p.floats().length > 1 || p.divisor() != 1)) {
                    shares.shareFloats(p.floats(), p.round().count(), p.divisor());
                } else if (p.ints() != null && (p.ints().length > 1 || p.divisor() != 1)) {
                    shares.shareInts(p.ints(), p.round().count(), p.divisor());
                }
                lastHeard.set(System.nanoTime());
                for (LocalProcess process : processes) {
                    process.send("D " + p.round().ids()[process.local]);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            fail("cannot answer the local processes: " + e.getMessage());
        } catch (RuntimeException e) {
            fail(describe(e));
        }
    }

    private void fail(String why) {
        fail(why, null);
    }

    /**
     * Records and logs the first failure, tells the processes why (for {@code round}'s requests, or all), and closes
     * the sockets. One failure at a time: a second (the watchdog's and the accepting thread's at the same deadline)
     * must not close the sockets while the first is still telling the processes why.
     */
    private synchronized void fail(String why, LocalRounds.Round round) {
        if (failure.compareAndSet(null, why)) {
            log.println("switchml agent: " + who() + ": " + why);
            for (LocalProcess p : processes) {
                tell(p, (round != null ? "E " + round.ids()[p.local] + " " : "FAIL ") + oneLine(why));
            }
        }
        for (SocketChannel c : connections) {
            AgentLines.close(c);
        }
        outcome.complete(1);
    }

    private static void tell(LocalProcess p, String line) {
        try {
            p.send(line);
        } catch (IOException | RuntimeException ignored) {
            // The process is gone already: nobody left to tell.
        }
    }

    /** A failure in words for the log and the ranks: its message, else its kind. */
    static String describe(Throwable e) {
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

    /** A round in flight (its tensors, one per local rank, and the divisor of its result), or a process's BYE in its place. */
    private record Pending(LocalRounds.Round round, CompletableFuture<Void> future, FloatBuffer[] floats, IntBuffer[] ints,
                           int divisor, LocalProcess bye) {
        static Pending bye(LocalProcess p) {
            return new Pending(null, null, null, null, 1, p);
        }
    }
}
