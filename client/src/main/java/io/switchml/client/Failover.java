package io.switchml.client;

import io.switchml.api.AllReduce;
import io.switchml.api.ControlPlaneException;
import io.switchml.api.FallbackProvider;
import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchMLException;
import io.switchml.api.SwitchUnavailableException;
import io.switchml.api.UnrepresentableValueException;
import io.switchml.control.ControllerAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.Buffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One move of a job from a lost switch to the next one (or to the fallback ring), on the
 * context's failover thread: stop the lost session's worker threads and collect which blocks of
 * the unfinished all-reduces this worker holds; join the same job at the next controller (its
 * rendezvous waits for every worker); agree with the others on who holds what
 * ({@link RecoveryPlan}); redo and copy the missing blocks there; hand the rest of the work over.
 */
final class Failover {
    private static final Logger LOG = LoggerFactory.getLogger(Failover.class);
    /** How long the lost session's worker threads may take to stop. */
    private static final Duration STOP_TIMEOUT = Duration.ofSeconds(10);

    private final SwitchMLContext context;
    private final SwitchMLConfig config;
    private final SwitchSession lost;
    private final SwitchUnavailableException why;
    private final CompletableFuture<Void> finished = new CompletableFuture<>();
    /** Completed when the switch this failover moves to is lost too. */
    private final CompletableFuture<SwitchUnavailableException> targetLost = new CompletableFuture<>();
    private volatile SwitchSession target;

    Failover(SwitchMLContext context, SwitchSession lost, SwitchUnavailableException why) {
        this.context = context;
        this.config = context.config();
        this.lost = lost;
        this.why = why;
    }

    /** Completed once the failover is over, either way. */
    CompletableFuture<Void> finished() {
        return finished;
    }

    /** A session lost its switch while this failover runs: matters only if it is the one moved to. */
    void switchLost(SwitchSession session, SwitchUnavailableException error) {
        if (session == target) {
            targetLost.complete(error);
        }
    }

    void run() {
        try {
            LOG.warn("rank {}: {} Failing over.", config.rank(), why.getMessage());
            Map<Long, BitSet> heldBySessionSequence = lost.stop(STOP_TIMEOUT);
            // Taken after the stop: nothing more reaches the lost switch, and later submissions are parked.
            long lastSubmitted = context.lastSubmitted();
            List<PendingOperation> unfinished = new ArrayList<>();
            Map<Long, BitSet> held = new HashMap<>();
            for (PendingOperation p : context.unfinished()) {
                long s = p.sequenceIn(lost);
                if (s >= 0 && !heldBySessionSequence.containsKey(s)) {
                    continue; // finished here; the lost session is completing it
                }
                if (p.sequence > lastSubmitted) {
                    continue; // parked after the snapshot: sent as new work
                }
                unfinished.add(p);
                held.put(p.sequence, s >= 0 ? heldBySessionSequence.get(s) : new BitSet());
            }
            lost.close();
            AllReduce backend = nextBackend();
            // Counted before the recovery completes any all-reduce, so whoever sees one finish sees it.
            context.statistics().failovers.increment();
            List<PendingOperation> resend = recover(backend, unfinished, held, lastSubmitted);
            SwitchUnavailableException lostToo = targetLost.getNow(null);
            if (lostToo != null) {
                backend.close();
                throw new SwitchUnavailableException(why.getMessage() + " The failover failed: the next switch was lost"
                        + " too (" + lostToo.getMessage() + ")", lostToo);
            }
            context.failoverDone(backend, resend);
        } catch (SwitchMLException e) {
            context.failoverFailed(e);
        } catch (RuntimeException e) {
            context.failoverFailed(new SwitchUnavailableException(why.getMessage() + " The failover failed: " + e, e));
        }
    }

    /** The next switch that takes the job, or the fallback; fails naming every switch tried. */
    private AllReduce nextBackend() {
        List<ControllerAddress> controllers = config.controllers();
        StringBuilder tried = new StringBuilder(controllers.get(context.controllerIndex()) + " (lost: " + why.getMessage() + ")");
        for (int i = context.controllerIndex() + 1; i < controllers.size(); i++) {
            context.triedController(i);
            try {
                SwitchSession joined = context.join(i, false);
                target = joined;
                if (context.isClosed()) {
                    joined.close();
                    throw new SwitchMLException("the context was closed during a failover");
                }
                LOG.info("rank {}: job '{}' failed over to the switch at {} (job number {})", config.rank(), config.job(),
                        controllers.get(i), joined.jobNumber());
                return joined;
            } catch (ControlPlaneException e) {
                tried.append("; ").append(controllers.get(i)).append(" (").append(e.getMessage()).append(')');
            }
        }
        FallbackProvider.Endpoint fallback = context.fallback();
        if (fallback != null) {
            LOG.info("rank {}: no switch left for job '{}'; falling back to {}", config.rank(), config.job(), config.fallback().settingName());
            return fallback.open(context.fallbackEndpoints());
        }
        throw new SwitchUnavailableException("job '" + config.job() + "', rank " + config.rank() + ": the switch was lost"
                + " and no switch is left to fail over to. Switches tried, in order: " + tried + ". "
                + SwitchMLConfig.Key.FALLBACK.property() + " is none, so the all-reduces in progress failed and this context"
                + " can no longer be used; close it on every worker and join again once a switch is back (or set "
                + SwitchMLConfig.Key.FALLBACK.property() + "=ring).", why);
    }

    /**
     * Agrees with the other workers on who holds what, redoes and copies the missing blocks, and
     * completes the all-reduces so finished. Returns the unfinished ones that no worker had any
     * result of, to send again whole.
     */
    private List<PendingOperation> recover(AllReduce backend, List<PendingOperation> unfinished, Map<Long, BitSet> held,
                                           long lastSubmitted) {
        int n = config.workers();
        int rank = config.rank();
        int k = config.elementsPerPacket();
        long oldest = unfinished.isEmpty() ? lastSubmitted + 1 : unfinished.get(0).sequence;
        int[] progressBits = RecoveryPlan.progressContribution(rank, n, oldest, lastSubmitted);
        await(backend.allReduceAsync(IntBuffer.wrap(progressBits), IntBuffer.wrap(progressBits), ReduceOp.SUM),
                "the progress agreement");
        RecoveryPlan.Progress progress = RecoveryPlan.progress(progressBits, n);
        long first = progress.first();
        long last = progress.last();
        Map<Long, PendingOperation> bySequence = new HashMap<>();
        unfinished.forEach(p -> bySequence.put(p.sequence, p));
        List<PendingOperation> resend = new ArrayList<>();
        for (PendingOperation p : unfinished) {
            if (p.sequence > last) {
                p.supersede();
                resend.add(p);
            }
        }
        if (first > last) {
            return resend;
        }
        int count = Math.toIntExact(last - first + 1);
        int[] blocks = new int[count];
        Map<Integer, BitSet> heldByIndex = new HashMap<>();
        for (int i = 0; i < count; i++) {
            int length = context.lengthOf(first + i);
            if (length < 0) {
                throw new SwitchMLException("cannot fail over: another worker still waits for all-reduce #" + (first + i)
                        + ", which this worker finished too long ago to remember its length");
            }
            blocks[i] = BlockRanges.count(length, k);
            if (bySequence.containsKey(first + i)) {
                heldByIndex.put(i, held.get(first + i));
            }
        }
        int[] heldBits = RecoveryPlan.heldContribution(rank, n, blocks, heldByIndex);
        await(backend.allReduceAsync(IntBuffer.wrap(heldBits), IntBuffer.wrap(heldBits), ReduceOp.SUM),
                "the held-blocks agreement");
        for (RecoveryPlan.Repair repair : RecoveryPlan.repairs(progress, first, blocks, heldBits)) {
            repair(backend, repair, bySequence.get(repair.sequence()), held.get(repair.sequence()), k);
        }
        return resend;
    }

    /** Redoes and copies the missing blocks of one all-reduce; {@code p} is null where it finished here. */
    private void repair(AllReduce backend, RecoveryPlan.Repair repair, PendingOperation p, BitSet heldHere, int k) {
        RuntimeException unrepresentable = null;
        if (repair.redo().length > 0) {
            if (p == null) {
                throw new SwitchMLException("cannot fail over: all-reduce #" + repair.sequence() + " has blocks no worker"
                        + " holds, but this worker finished it");
            }
            Buffer gathered = p.gatherInput(repair.redo(), k);
            try {
                await(p.isFloat()
                                ? backend.allReduceAsync((FloatBuffer) gathered, (FloatBuffer) gathered, p.op)
                                : backend.allReduceAsync((IntBuffer) gathered, (IntBuffer) gathered, p.op),
                        "redoing " + repair.redo().length + " block(s) of all-reduce #" + repair.sequence());
            } catch (UnrepresentableValueException e) {
                unrepresentable = e; // the values are written (NaN where unrepresentable); report it as usual
            }
            p.scatterOutput(gathered, repair.redo(), k);
        }
        if (repair.copy().length > 0) {
            copy(backend, repair, p, heldHere, k);
        }
        if (p != null) {
            WorkerStatistics statistics = context.statistics();
            statistics.blocksKept.add(repair.kept());
            statistics.blocksRedone.add(repair.redo().length);
            statistics.blocksCopied.add(repair.copy().length);
            p.supersede();
            if (unrepresentable == null) {
                p.result.complete(null);
            } else {
                p.result.completeExceptionally(unrepresentable);
            }
        }
    }

    /** Each copied block's donor contributes its output bits, everyone else zeros; the sum is the donor's. */
    private void copy(AllReduce backend, RecoveryPlan.Repair repair, PendingOperation p, BitSet heldHere, int k) {
        int[] copy = repair.copy();
        int length = context.lengthOf(repair.sequence());
        int[] bits = new int[BlockRanges.elements(copy, k, length)];
        int at = 0;
        for (int i = 0; i < copy.length; i++) {
            int[] block = {copy[i]};
            if (p != null && repair.copyDonors()[i] == config.rank()) {
                p.copyOutputBits(block, k, bits, at);
            }
            at += BlockRanges.end(copy[i], k, length) - copy[i] * k;
        }
        await(backend.allReduceAsync(IntBuffer.wrap(bits), IntBuffer.wrap(bits), ReduceOp.SUM),
                "copying " + copy.length + " block(s) of all-reduce #" + repair.sequence());
        if (p == null) {
            return;
        }
        at = 0;
        for (int b : copy) {
            if (!heldHere.get(b)) {
                p.writeOutputBits(new int[]{b}, k, bits, at);
            }
            at += BlockRanges.end(b, k, length) - b * k;
        }
    }

    /** Waits for one step of the recovery; fails at once if the switch it runs on is lost too. */
    private void await(CompletableFuture<Void> step, String what) {
        long waitMs = config.operationTimeout().toMillis();
        try {
            CompletableFuture.anyOf(step, targetLost).get(waitMs, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new SwitchMLException("interrupted during a failover (" + what + ")", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof UnrepresentableValueException u) {
                throw u;
            }
            throw new SwitchUnavailableException(why.getMessage() + " The failover failed while " + what + ": "
                    + cause.getMessage(), cause);
        } catch (TimeoutException e) {
            throw new SwitchUnavailableException(why.getMessage() + " The failover did not finish " + what + " within "
                    + waitMs + " ms", e);
        }
        SwitchUnavailableException lostToo = targetLost.getNow(null);
        if (lostToo != null && !step.isDone()) {
            throw new SwitchUnavailableException(why.getMessage() + " The failover failed: the next switch was lost too ("
                    + lostToo.getMessage() + ")", lostToo);
        }
    }
}
