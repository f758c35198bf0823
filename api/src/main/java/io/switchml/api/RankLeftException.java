package io.switchml.api;

/**
 * Another worker left the job (closed its context) before this one's all-reduce could complete: it
 * finished {@link #leftOperations()} all-reduces, and every all-reduce from that number on needs
 * its contribution, which will never come. Usually the ranks ran different numbers of steps; with
 * uneven data, see {@link UnevenInputs}.
 */
public class RankLeftException extends SwitchMLException {
    private static final long serialVersionUID = 1L;

    private final int leftRank;
    private final long leftOperations;

    public RankLeftException(String job, int jobNumber, int leftRank, long leftOperations, int rank, String waiting) {
        super("rank " + leftRank + " left job '" + job + "' (job number " + jobNumber + ", closed its context) after finishing "
                + leftOperations + " all-reduce(s), but this worker (rank " + rank + ") " + waiting + ", which needs every"
                + " rank: it can never complete. Every rank must submit the same sequence of all-reduces (the same number"
                + " of training steps); with uneven data, let the ranks that run out join (UnevenInputs, or"
                + " GradientSynchronizer.join in DJL).");
        this.leftRank = leftRank;
        this.leftOperations = leftOperations;
    }

    /** The rank that left. */
    public int leftRank() {
        return leftRank;
    }

    /** How many all-reduces it finished before it left. */
    public long leftOperations() {
        return leftOperations;
    }
}
