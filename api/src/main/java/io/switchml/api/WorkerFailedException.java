package io.switchml.api;

import java.util.List;

/**
 * Another worker of the job died (its process ended or lost its connection to the controller
 * without leaving the job). The controller aborted the job and the switch freed its slots; every
 * pending and later operation of this context fails with this exception. Close the context,
 * restart the failed worker and join again.
 */
public class WorkerFailedException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    private final String jobName;
    private final int jobNumber;
    private final List<Integer> failedRanks;

    public WorkerFailedException(String jobName, int jobNumber, List<Integer> failedRanks, int rank, String reason) {
        super("job '" + jobName + "' (job number " + jobNumber + ") was aborted because rank"
                + (failedRanks.size() == 1 ? " " + failedRanks.get(0) : "s " + failedRanks) + " died while this worker (rank "
                + rank + ") was in the job: " + reason + ". The switch freed the job's slots and this context can no"
                + " longer be used. To go on, restart the job: close this context on every surviving worker, restart the"
                + " failed worker(s), and join again.");
        this.jobName = jobName;
        this.jobNumber = jobNumber;
        this.failedRanks = List.copyOf(failedRanks);
    }

    /** The same failure, raised again by a later call (with the first one as its cause). */
    public WorkerFailedException(WorkerFailedException first) {
        super(first.getMessage(), first);
        this.jobName = first.jobName;
        this.jobNumber = first.jobNumber;
        this.failedRanks = first.failedRanks;
    }

    public String jobName() {
        return jobName;
    }

    public int jobNumber() {
        return jobNumber;
    }

    /** The ranks the controller declared dead, ascending. */
    public List<Integer> failedRanks() {
        return failedRanks;
    }
}
