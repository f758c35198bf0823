package io.switchml.examples;

import io.switchml.api.ReduceOp;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;

import java.util.Arrays;

/**
 * One rank of a job that averages a vector through a running switch:
 * {@code PlainAllReduce CONTROLLER_HOST:PORT JOB RANK WORKERS}. Every rank prints the same mean.
 */
public final class PlainAllReduce {
    private PlainAllReduce() {
    }

    public static void main(String[] args) {
        if (args.length != 4) {
            System.err.println("usage: PlainAllReduce CONTROLLER_HOST:PORT JOB RANK WORKERS");
            System.exit(64);
        }
        float[] mean = run(args[0], args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        System.out.println("rank " + args[2] + ": mean " + mean[0]);
    }

    /** Joins the job as {@code rank}; returns the mean over all ranks of each rank's vector (every element rank + 1). */
    public static float[] run(String controller, String job, int rank, int workers) {
        // README:plain:begin
        SwitchMLConfig config = SwitchMLConfig.builder()
                .controller(controller)                    // the switch's controller, HOST:PORT
                .job(job).rank(rank).workers(workers)      // the same job and workers on every rank
                .build();
        try (SwitchMLContext allReduce = SwitchMLContext.connect(config)) {   // returns once every rank has joined
            float[] gradient = new float[1 << 20];
            Arrays.fill(gradient, rank + 1);
            allReduce.allReduce(gradient, ReduceOp.MEAN);  // in place: the element-wise mean over the ranks
            return gradient;
        }
        // README:plain:end
    }
}
