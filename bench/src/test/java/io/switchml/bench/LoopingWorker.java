package io.switchml.bench;

import io.switchml.api.ReduceOp;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;

import java.time.Duration;

/**
 * A worker process for failure tests: joins a job and all-reduces int32 tensors in a loop, checking
 * every sum exactly, until an operation fails. Prints {@code joined job-number N}, then
 * {@code running} after its first all-reduce, and finally one line {@code FAILED <class>: <message>}
 * before exiting with status 3.
 *
 * <p>Arguments: controller (host:port), job name, rank, workers, operation timeout (ms), elements.
 */
public final class LoopingWorker {
    private LoopingWorker() {
    }

    public static void main(String[] args) {
        int rank = Integer.parseInt(args[2]);
        int workers = Integer.parseInt(args[3]);
        int elements = Integer.parseInt(args[5]);
        SwitchMLConfig config = SwitchMLConfig.builder().controller(args[0]).job(args[1]).rank(rank).workers(workers)
                .operationTimeout(Duration.ofMillis(Long.parseLong(args[4]))).joinTimeout(Duration.ofSeconds(60)).build();
        try (SwitchMLContext context = SwitchMLContext.connect(config)) {
            System.out.println("joined job-number " + context.jobNumber());
            int[] in = new int[elements];
            int[] out = new int[elements];
            for (long iteration = 0; ; iteration++) {
                for (int i = 0; i < elements; i++) {
                    in[i] = (int) (rank * 1_000 + i + iteration);
                }
                context.allReduce(in, out, ReduceOp.SUM);
                for (int i = 0; i < elements; i++) {
                    long expected = (long) workers * (i + iteration) + 1_000L * workers * (workers - 1) / 2;
                    if (out[i] != (int) expected) {
                        throw new IllegalStateException("iteration " + iteration + ": element " + i + " = " + out[i]
                                + ", expected " + (int) expected);
                    }
                }
                if (iteration == 0) {
                    System.out.println("running");
                }
            }
        } catch (RuntimeException e) {
            System.out.println("FAILED " + e.getClass().getName() + ": " + e.getMessage());
            System.out.flush();
            System.exit(3);
        }
    }
}
