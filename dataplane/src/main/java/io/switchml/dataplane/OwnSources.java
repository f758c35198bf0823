package io.switchml.dataplane;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.Arrays;

/**
 * The switch's own UDP sources: its ports on its address (every address of the host when it listens
 * on 0.0.0.0, loopback ones included). A worker endpoint there would have the switch answer its own
 * packets: one spoofed datagram from such a source, once accepted as a contribution, makes the switch
 * send the result to itself, which it takes as the next contribution, and so on, a core's worth of
 * packets that also count as the job's activity. So such endpoints are refused at installation, and a
 * worker matched by address alone on the switch's own address never matches the switch's own ports
 * (see {@link WorkerTable}).
 */
final class OwnSources {
    /** Before the switch has bound its ports: nothing is its own yet. */
    static final OwnSources NONE = new OwnSources(null, new int[0]);

    private final InetAddress bind;
    private final int[] ports;

    OwnSources(InetAddress bind, int[] ports) {
        this.bind = bind;
        this.ports = ports.clone();
    }

    /** The switch's UDP ports. */
    int[] ports() {
        return ports.clone();
    }

    boolean ownPort(int port) {
        for (int own : ports) {
            if (own == port) {
                return true;
            }
        }
        return false;
    }

    /** Whether the switch would receive a datagram sent to {@code address} on its ports. */
    boolean ownAddress(InetAddress address) {
        if (bind == null) {
            return false;
        }
        if (!bind.isAnyLocalAddress()) {
            return bind.equals(address);
        }
        if (address.isAnyLocalAddress() || address.isLoopbackAddress()) {
            return true;
        }
        try {
            return NetworkInterface.getByInetAddress(address) != null;
        } catch (SocketException e) {
            return true; // cannot tell: taken for the switch's, so never a worker's at one of its ports
        }
    }

    /** Whether (address, port) is one of the switch's own sources. */
    boolean own(InetAddress address, int port) {
        return ownPort(port) && ownAddress(address);
    }

    @Override
    public String toString() {
        return (bind == null ? "none" : bind.getHostAddress()) + " UDP " + Arrays.toString(ports);
    }
}
