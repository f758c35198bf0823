package io.switchml.dataplane;

import io.switchml.protocol.PayloadSize;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/** Job specs for tests: worker r of job j lives at 10.j.1.r, thread t on UDP port 40000 + t. */
final class TestJobs {
    static final int FIRST_WORKER_PORT = 40000;

    private TestJobs() {
    }

    /** A job with SwitchML's semantics: the tsi is opaque to the switch (no round checking). */
    static JobSpec job(int jobNumber, int workers, PayloadSize size, int slotsPerThread, int threads) {
        return job(jobNumber, workers, size, slotsPerThread, threads, false);
    }

    static JobSpec job(int jobNumber, int workers, PayloadSize size, int slotsPerThread, int threads,
                       boolean roundNumbers) {
        List<WorkerEndpoint> endpoints = new ArrayList<>();
        for (int rank = 0; rank < workers; rank++) {
            int[] ports = new int[threads];
            for (int t = 0; t < threads; t++) {
                ports[t] = FIRST_WORKER_PORT + t;
            }
            endpoints.add(new WorkerEndpoint(address(jobNumber, rank), ports));
        }
        return new JobSpec(jobNumber, "job-" + jobNumber, size, slotsPerThread, threads, endpoints, roundNumbers);
    }

    static InetAddress address(int jobNumber, int rank) {
        return Ipv4.toAddress(10 << 24 | jobNumber << 16 | 1 << 8 | rank);
    }

    /** Where worker {@code rank} of {@code spec} receives the results of thread {@code thread}'s slots. */
    static InetSocketAddress recipient(JobSpec spec, int rank, int thread) {
        WorkerEndpoint endpoint = spec.endpoints().get(rank);
        return new InetSocketAddress(endpoint.address(), endpoint.port(thread));
    }

    /** Every worker's address for thread {@code thread}, in rank order. */
    static List<InetSocketAddress> recipients(JobSpec spec, int thread) {
        List<InetSocketAddress> all = new ArrayList<>();
        for (int rank = 0; rank < spec.workers(); rank++) {
            all.add(recipient(spec, rank, thread));
        }
        return all;
    }
}
