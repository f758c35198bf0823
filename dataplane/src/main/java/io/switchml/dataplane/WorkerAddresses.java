package io.switchml.dataplane;

import java.net.InetSocketAddress;

/**
 * Where the switch sends a job's results: each worker thread's address and port, resolved once
 * when the job is installed so that sending a result creates no address objects.
 */
final class WorkerAddresses {
    /** addresses[thread][rank]: a multicast walks one row. */
    private final InetSocketAddress[][] addresses;

    WorkerAddresses(JobSpec spec) {
        addresses = new InetSocketAddress[spec.threads()][spec.workers()];
        for (int rank = 0; rank < spec.workers(); rank++) {
            WorkerEndpoint endpoint = spec.endpoints().get(rank);
            for (int thread = 0; thread < spec.threads(); thread++) {
                addresses[thread][rank] = new InetSocketAddress(endpoint.address(), endpoint.port(thread));
            }
        }
    }

    InetSocketAddress address(int rank, int thread) {
        return addresses[thread][rank];
    }

    int workers() {
        return addresses[0].length;
    }
}
