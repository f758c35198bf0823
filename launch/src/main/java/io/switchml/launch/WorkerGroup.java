package io.switchml.launch;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The worker processes of one run, as a launcher sees them: it waits for what they report, fails as
 * soon as one of them dies (naming it, with its last error lines) or the run's time is up, introduces
 * {@code ring} and {@code ps} workers to each other, and kills whatever is left when closed.
 */
public final class WorkerGroup implements AutoCloseable {
    private final List<WorkerProcess> workers = new ArrayList<>();
    private final Duration timeout;
    private final RunDeadline deadline;

    /** @param timeout how long the whole run may take; zero: no limit */
    public WorkerGroup(Duration timeout) {
        this.timeout = timeout;
        this.deadline = RunDeadline.after(timeout);
    }

    public void add(WorkerProcess worker) {
        workers.add(worker);
    }

    public int size() {
        return workers.size();
    }

    /** The next item a worker puts in the queue; fails when a worker exits first or the time is up. */
    public <T> T next(BlockingQueue<T> queue, String what) throws InterruptedException {
        while (true) {
            T item = queue.poll(200, TimeUnit.MILLISECONDS);
            if (item != null) {
                return item;
            }
            // A worker that exited cleanly may have put its item in already (the one awaited is another's): it fails
            // the wait only once no worker is left to deliver, its output read to the end.
            boolean anyAlive = false;
            WorkerProcess exitedCleanly = null;
            for (WorkerProcess w : workers) {
                Integer code = w.alive() ? null : w.exitCode(1_000);
                if (code != null && code != 0) {
                    throw failure(w, "exited with code " + code + " before " + what);
                }
                anyAlive |= code == null;
                exitedCleanly = code == null || exitedCleanly != null ? exitedCleanly : w;
            }
            if (!anyAlive && exitedCleanly != null && queue.isEmpty()) {
                throw failure(exitedCleanly, "exited with code 0 before " + what);
            }
            if (deadline.passed()) {
                throw new LaunchException("the " + workers.size() + " workers did not finish within " + timeout.toSeconds()
                        + " s (waiting for them " + what + ")");
            }
        }
    }

    /** Waits for every rank's endpoints, then tells every rank all of them. */
    public void introduce(BlockingQueue<PeerEndpoints.Endpoint> endpoints) throws InterruptedException {
        int n = workers.size();
        PeerEndpoints.Endpoint[] byRank = new PeerEndpoints.Endpoint[n];
        for (int i = 0; i < n; i++) {
            PeerEndpoints.Endpoint e = next(endpoints, "reporting its endpoints");
            if (e.rank() < 0 || e.rank() >= n || byRank[e.rank()] != null) {
                throw new LaunchException("a worker process reported endpoints for rank " + e.rank() + " twice or out of 0.."
                        + (n - 1) + ": " + e.toLine());
            }
            byRank[e.rank()] = e;
        }
        List<InetSocketAddress> workerEndpoints = new ArrayList<>();
        List<InetSocketAddress> serverEndpoints = new ArrayList<>();
        for (PeerEndpoints.Endpoint e : byRank) {
            workerEndpoints.add(e.worker());
            if (e.server() != null) {
                serverEndpoints.add(e.server());
            }
        }
        String peers = new PeerEndpoints(workerEndpoints, serverEndpoints).toLine();
        for (WorkerProcess w : workers) {
            w.send(peers);
        }
    }

    /** Waits for every worker to exit; fails naming the first that did not exit, or not with code 0. */
    public void awaitSuccess(long waitMs) throws InterruptedException {
        for (WorkerProcess w : workers) {
            Integer code = w.exitCode(waitMs);
            if (code == null || code != 0) {
                throw failure(w, code == null ? "did not exit" : "exited with code " + code);
            }
        }
    }

    private static LaunchException failure(WorkerProcess w, String what) {
        return new LaunchException("worker process " + w.rank() + " " + what + ":\n" + w.lastErrors());
    }

    @Override
    public void close() {
        workers.forEach(WorkerProcess::kill);
    }
}
