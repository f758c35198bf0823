package io.switchml.controller;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;

/**
 * Which peers may reach a service by their address alone: nobody ({@code off}), everybody
 * ({@code on}), or peers whose address lies in one of the listed subnets
 * ({@code 10.0.0.0/8,127.0.0.1/32}). For SwitchML's own session protocol (services Session and Sync),
 * which has no credentials, and for a switch's trusted networks (protected mode).
 */
public final class NetworkPolicy {
    public static final NetworkPolicy ON = new NetworkPolicy(true, List.of());
    public static final NetworkPolicy OFF = new NetworkPolicy(false, List.of());

    private final boolean all;
    private final List<Subnet> subnets;

    private NetworkPolicy(boolean all, List<Subnet> subnets) {
        this.all = all;
        this.subnets = subnets;
    }

    /**
     * {@code off}, {@code on} or a comma-separated list of IPv4 or IPv6 CIDR blocks.
     *
     * @param option the option that gave it ({@code --switchml-sessions}), which an error names
     * @throws IllegalArgumentException naming the block that does not parse
     */
    public static NetworkPolicy parse(String option, String text) {
        String t = text == null ? "" : text.trim();
        if (t.equalsIgnoreCase("on")) {
            return ON;
        }
        if (t.equalsIgnoreCase("off")) {
            return OFF;
        }
        List<Subnet> subnets = new ArrayList<>();
        for (String item : t.split(",")) {
            if (!item.isBlank()) {
                subnets.add(Subnet.parse(option, item.trim()));
            }
        }
        if (subnets.isEmpty()) {
            throw new IllegalArgumentException(option + ": give off, on or a list of subnets such as"
                    + " 10.0.0.0/8,127.0.0.1/32, not '" + text + "'");
        }
        return new NetworkPolicy(false, List.copyOf(subnets));
    }

    /** Whether a peer at this address may open sessions; null (an unknown peer) only when every peer may. */
    public boolean allows(InetAddress peer) {
        if (all) {
            return true;
        }
        return peer != null && subnets.stream().anyMatch(s -> s.contains(peer));
    }

    public boolean off() {
        return !all && subnets.isEmpty();
    }

    public boolean everyone() {
        return all;
    }

    @Override
    public String toString() {
        return all ? "on" : subnets.isEmpty() ? "off" : String.join(",", subnets.stream().map(Subnet::toString).toList());
    }

    /** One CIDR block. */
    private record Subnet(byte[] network, int prefix, String text) {
        static Subnet parse(String option, String cidr) {
            int slash = cidr.indexOf('/');
            String address = slash < 0 ? cidr : cidr.substring(0, slash);
            // A literal only: a host name here would make start-up do a DNS lookup.
            if (!address.matches("[0-9a-fA-F:.]+")) {
                throw new IllegalArgumentException(option + ": '" + cidr + "' is not a subnet (ADDRESS/PREFIX)");
            }
            byte[] bytes;
            try {
                bytes = InetAddress.getByName(address).getAddress();
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException(option + ": '" + cidr + "' is not a subnet (ADDRESS/PREFIX)", e);
            }
            int prefix;
            try {
                prefix = slash < 0 ? bytes.length * 8 : Integer.parseInt(cidr.substring(slash + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + ": '" + cidr + "' has no prefix length after /", e);
            }
            if (prefix < 0 || prefix > bytes.length * 8) {
                throw new IllegalArgumentException(option + ": prefix /" + prefix + " of '" + cidr + "' outside 0.."
                        + bytes.length * 8);
            }
            return new Subnet(bytes, prefix, cidr);
        }

        boolean contains(InetAddress peer) {
            byte[] p = peer.getAddress();
            if (p.length != network.length) {
                return false;
            }
            for (int bit = 0; bit < prefix; bit++) {
                int mask = 0x80 >>> (bit % 8);
                if ((p[bit / 8] & mask) != (network[bit / 8] & mask)) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public String toString() {
            return text;
        }
    }
}
