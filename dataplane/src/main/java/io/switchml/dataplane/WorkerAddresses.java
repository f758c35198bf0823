package io.switchml.dataplane;

import java.net.InetSocketAddress;

/**
 * Where the switch sends a job's results: each worker thread's address and port, resolved once
 * when the job is installed so that sending a result creates no address objects. A worker matched
 * by address alone has no fixed port: its address is null here, and the sender answers at the port
 * the packet came from (see {@link ReplyAddresses}).
 */
final class WorkerAddresses {
    /** addresses[thread][rank]: a multicast walks one row. */
    private final InetSocketAddress[][] addresses;
    private final int[] ipv4;

    WorkerAddresses(JobSpec spec) {
        addresses = new InetSocketAddress[spec.threads()][spec.workers()];
        ipv4 = new int[spec.workers()];
        for (int rank = 0; rank < spec.workers(); rank++) {
            WorkerEndpoint endpoint = spec.endpoints().get(rank);
            ipv4[rank] = Ipv4.toInt(endpoint.address());
            for (int thread = 0; thread < spec.threads() && !endpoint.anyPort(); thread++) {
                addresses[thread][rank] = new InetSocketAddress(endpoint.address(), endpoint.port(thread));
            }
        }
    }

    /** Thread's address on worker rank; null for a worker matched by address alone. */
    InetSocketAddress address(int rank, int thread) {
        return addresses[thread][rank];
    }

    int ipv4(int rank) {
        return ipv4[rank];
    }

    int workers() {
        return addresses[0].length;
    }
}
