package io.switchml.collectives;

import io.switchml.client.AllReduce;
import io.switchml.client.FallbackProvider;
import io.switchml.client.SwitchMLConfig;

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
    public Endpoint bind(SwitchMLConfig config, InetAddress localAddress) {
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
                CollectiveConfig ring = CollectiveConfig.builder().algorithm("ring").rank(config.rank())
                        .workers(config.workers()).endpoints(addresses).connectTimeout(config.joinTimeout())
                        .operationTimeout(config.operationTimeout()).build();
                return RingAllReduce.open(ring, listener);
            }

            @Override
            public void close() {
                listener.close();
            }
        };
    }
}
