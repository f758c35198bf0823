package io.switchml.dataplane;

import io.switchml.protocol.ProtocolConstants;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Arrays;

/**
 * Where a leaf switch sends a job's partial results: the spine switch's dataplane and the number
 * of the job the spine runs for it (docs/ARCHITECTURE.md section 9). Worker thread t's slots go to
 * {@code spinePorts[t % spinePorts.length]}, the spine port that owns them, and the spine's results
 * come back from those ports.
 *
 * @param spineAddress   the spine dataplane's IPv4 address
 * @param spinePorts     the spine's UDP ports, in the spine's port order
 * @param spineJobNumber the job number of the spine's job, which the partials carry in their header
 */
public record UplinkSpec(InetAddress spineAddress, int[] spinePorts, int spineJobNumber) {
    public UplinkSpec {
        if (!(spineAddress instanceof Inet4Address)) {
            throw new IllegalArgumentException("spine address " + (spineAddress == null ? "null"
                    : spineAddress.getHostAddress()) + " is not IPv4; the uplink table keys on IPv4 addresses");
        }
        if (spinePorts == null || spinePorts.length == 0) {
            throw new IllegalArgumentException("the spine at " + spineAddress.getHostAddress() + " has no ports");
        }
        spinePorts = spinePorts.clone();
        for (int port : spinePorts) {
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException("spine port " + port + " is outside 1..65535");
            }
        }
        if (spineJobNumber < 0 || spineJobNumber >= ProtocolConstants.MAX_JOBS) {
            throw new IllegalArgumentException("spine job number " + spineJobNumber + " is outside 0.."
                    + (ProtocolConstants.MAX_JOBS - 1));
        }
    }

    /** A copy: the record stays immutable. */
    @Override
    public int[] spinePorts() {
        return spinePorts.clone();
    }

    /** The spine port that owns thread {@code thread}'s slots. */
    public int spinePort(int thread) {
        return spinePorts[thread % spinePorts.length];
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof UplinkSpec that && spineAddress.equals(that.spineAddress)
                && Arrays.equals(spinePorts, that.spinePorts) && spineJobNumber == that.spineJobNumber;
    }

    @Override
    public int hashCode() {
        return 31 * (31 * spineAddress.hashCode() + Arrays.hashCode(spinePorts)) + spineJobNumber;
    }

    @Override
    public String toString() {
        return "spine " + spineAddress.getHostAddress() + Arrays.toString(spinePorts) + " job " + spineJobNumber;
    }
}
