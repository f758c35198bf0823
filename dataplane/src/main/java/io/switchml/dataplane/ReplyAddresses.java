package io.switchml.dataplane;

import java.net.InetSocketAddress;
import org.agrona.collections.Long2ObjectHashMap;

/**
 * The socket addresses of workers matched by address alone (SwitchML's), which the switch answers
 * at the port each packet came from, as SwitchML's switch swaps the UDP ports. Made once per
 * (address, port) and kept, so that a result allocates no address; one instance per receive
 * thread, not thread-safe.
 *
 * <p>A SwitchML worker sends from a few fixed ports (worker_port + thread id), so the cache stays
 * small; it is emptied if it ever holds {@link #CAPACITY} addresses, which bounds it whatever the
 * sources.
 */
final class ReplyAddresses {
    static final int CAPACITY = 4096;

    private final Long2ObjectHashMap<InetSocketAddress> addresses = new Long2ObjectHashMap<>();

    InetSocketAddress of(int ipv4, int port) {
        long key = WorkerTable.key(ipv4, port);
        InetSocketAddress address = addresses.get(key);
        if (address == null) {
            if (addresses.size() >= CAPACITY) {
                addresses.clear();
            }
            address = new InetSocketAddress(Ipv4.toAddress(ipv4), port);
            addresses.put(key, address);
        }
        return address;
    }
}
