package io.switchml.collectives;

import io.switchml.api.AllReduce;
import io.switchml.api.FallbackProvider;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code switchml.fallback=ring}: when no switch is left, the job goes on with {@link RingAllReduce}
 * between its workers. Each worker's listener is bound when it joins the job (an ephemeral port on
 * the address its switch traffic uses); the workers connect only after a switch failure.
 */
public final class RingFallback implements FallbackProvider {
    @Override
    public String name() {
        return "ring";
    }

    @Override
    public Endpoint bind(Job job, InetAddress localAddress) {
        Listener listener = Listener.bind(new InetSocketAddress(localAddress, 0));
        return new Endpoint() {
            @Override
            public String address() {
                return Endpoints.format(List.of(listener.address()));
            }

            @Override
            public AllReduce open(List<String> endpoints) {
                List<InetSocketAddress> addresses = new ArrayList<>();
                for (String e : endpoints) {
                    addresses.add(Endpoints.parseOne(e));
                }
                CollectiveConfig ring = CollectiveConfig.builder().algorithm("ring").rank(job.rank())
                        .workers(job.workers()).endpoints(addresses).connectTimeout(job.connectTimeout())
                        .operationTimeout(job.operationTimeout()).build();
                return RingAllReduce.open(ring, listener);
            }

            @Override
            public void close() {
                listener.close();
            }
        };
    }
}
