package io.switchml.client;

import io.switchml.protocol.PacketMac;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;

import java.net.InetAddress;

/**
 * Chooses the packet size and window a configuration leaves at {@code auto}, from the path to the
 * first controller: the largest payload whose datagram fits the MTU (60 KiB on loopback, 8 KiB on
 * 9000-byte jumbo frames, 1 KiB on 1500-byte Ethernet), and as many slots per thread as keep about
 * {@link #BYTES_IN_FLIGHT} in flight (at least 8, at most 64). On loopback the cost is per datagram,
 * not per byte, so the largest datagram wins; on a wire, a datagram beyond the MTU would be
 * fragmented, and one lost fragment loses the packet.
 */
final class PathSizing {
    /** Payload bytes in flight per worker thread: the 64 x 8 KiB that served the rack well. */
    static final int BYTES_IN_FLIGHT = 512 << 10;
    static final int MIN_WINDOW = 8;
    static final int MAX_WINDOW = 64;
    /** IPv4 and UDP headers under the packet. */
    private static final int IP_UDP_HEADER_BYTES = 28;

    private PathSizing() {
    }

    /** {@code config} with {@code elementsPerPacket} and {@code slotsPerThread} set where they were {@code auto}. */
    static SwitchMLConfig resolve(SwitchMLConfig config) {
        if (config.elementsPerPacket() != SwitchMLConfig.AUTO && config.slotsPerThread() != SwitchMLConfig.AUTO) {
            return config;
        }
        PayloadSize size;
        if (config.elementsPerPacket() != SwitchMLConfig.AUTO) {
            size = config.payloadSize();
        } else {
            InetAddress controller = Routes.resolveIpv4(config.controllers().get(0).host());
            size = forMtu(Routes.mtu(Routes.localAddress(config, controller), controller),
                    config.authenticatePackets() ? PacketMac.TAG_BYTES : 0);
        }
        SwitchMLConfig.Builder resolved = config.toBuilder().elementsPerPacket(size.elements());
        if (config.slotsPerThread() == SwitchMLConfig.AUTO) {
            resolved.slotsPerThread(Math.min(window(size), ProtocolConstants.MAX_SLOTS / config.threads()));
        }
        return resolved.build();
    }

    /** The largest payload whose datagram fits {@code mtu} (unknown, -1: one that fits 1500-byte Ethernet). */
    static PayloadSize forMtu(int mtu) {
        return forMtu(mtu, 0);
    }

    /** As {@link #forMtu(int)}, for datagrams that carry {@code trailerBytes} after the packet (a tag). */
    static PayloadSize forMtu(int mtu, int trailerBytes) {
        int room = (mtu > 0 ? mtu : 1500) - IP_UDP_HEADER_BYTES - trailerBytes;
        PayloadSize best = PayloadSize.B128;
        for (PayloadSize s : PayloadSize.values()) {
            if (s.packetBytes() <= room && s.bytes() > best.bytes()) {
                best = s;
            }
        }
        return best;
    }

    /** Slots per thread that keep about {@link #BYTES_IN_FLIGHT} of payload in flight. */
    static int window(PayloadSize size) {
        return Math.max(MIN_WINDOW, Math.min(MAX_WINDOW, BYTES_IN_FLIGHT / size.bytes()));
    }
}
