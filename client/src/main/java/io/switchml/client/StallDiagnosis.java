package io.switchml.client;

import io.switchml.api.AllReduceTimeoutException;
import io.switchml.control.ControlChannel;
import io.switchml.controller.proto.DiagnoseResponse;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/**
 * Why a job stalled, as far as the controller and the switch can tell: the ranks the switch is
 * still waiting for. A timed-out all-reduce's error is completed with it.
 */
final class StallDiagnosis {
    /** How long a timed-out all-reduce waits for the controller's answer. */
    private static final Duration DEADLINE = Duration.ofSeconds(2);

    private final ControlPlaneClient control;
    private final int jobNumber;
    private final long jobId;
    /** What the controller said about the first timeout; null before one. Guarded by this. */
    private CompletableFuture<Diagnosis> timeoutDiagnosis;

    StallDiagnosis(ControlPlaneClient control, int jobNumber, long jobId) {
        this.control = control;
        this.jobNumber = jobNumber;
        this.jobId = jobId;
    }

    /** What the controller said about the ranks the switch is waiting for. */
    record Diagnosis(String text, List<Integer> missingRanks) {
    }

    /** A timed-out all-reduce's error, completed with what the controller can tell about the missing ranks. */
    CompletionStage<Void> explain(Throwable failure) {
        Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
        if (!(cause instanceof AllReduceTimeoutException timeout)) {
            return CompletableFuture.failedFuture(cause);
        }
        return timeoutDiagnosis().thenCompose(d -> CompletableFuture.failedFuture(
                new AllReduceTimeoutException(timeout.getMessage() + " " + d.text(), d.missingRanks(), timeout)));
    }

    /** Asks the controller once, for the first timeout; every operation failed by it gets the same answer. */
    private synchronized CompletableFuture<Diagnosis> timeoutDiagnosis() {
        if (timeoutDiagnosis == null) {
            timeoutDiagnosis = control.diagnose(jobNumber, jobId, DEADLINE).handle((d, error) -> error == null
                    ? diagnosis(d)
                    : new Diagnosis("The controller at " + control.address() + " could not be asked which ranks the switch"
                    + " is waiting for (" + ControlChannel.describe(error) + ").", List.of()));
        }
        return timeoutDiagnosis;
    }

    private Diagnosis diagnosis(DiagnoseResponse d) {
        if (!d.getKnown()) {
            return new Diagnosis("Asked which ranks are missing, the controller at " + control.address()
                    + " no longer knows job number " + jobNumber + " (it ended, or the switch restarted).", List.of());
        }
        StringBuilder text = new StringBuilder();
        if (!d.getAbortedReason().isEmpty()) {
            text.append("The controller aborted the job: ").append(d.getAbortedReason()).append('.');
        } else if (!d.getWaitingAtSpine().isEmpty()) {
            text.append("Missing ranks: every rank at this worker's leaf switch has contributed; its spine is still"
                    + " waiting for ").append(d.getWaitingAtSpine()).append(", one or more of whose ranks have not (the"
                    + " workers at that leaf are told which).");
        } else if (d.getMissingRanksCount() > 0) {
            text.append("Missing ranks: the switch is still waiting for rank(s) ").append(d.getMissingRanksList())
                    .append(", which have not contributed to ").append(d.getIncompleteSlots())
                    .append(" slot(s) in progress (as far as the switch can tell: it reads its registers while it runs).");
        } else {
            text.append("Missing ranks: none; the switch holds no unfinished round of this job, so this worker's packets"
                    + " may not reach the switch, or its results may not come back.");
        }
        if (d.getLeftRanksCount() > 0) {
            text.append(" Rank(s) ").append(d.getLeftRanksList()).append(" already left the job.");
        }
        return new Diagnosis(text.toString(), d.getMissingRanksList());
    }
}
