package io.switchml.protocol;

/**
 * IPv4 addresses as the switch keys its worker table and its shared-memory senders: a.b.c.d is the
 * int {@code a << 24 | b << 16 | c << 8 | d}, one definition for every side that must agree on it.
 */
public final class Ipv4Addresses {
    private Ipv4Addresses() {
    }

    /** The four bytes of an IPv4 address, network order, as that int. */
    public static int toInt(byte[] address) {
        if (address.length != 4) {
            throw new IllegalArgumentException("an IPv4 address has 4 bytes, not " + address.length);
        }
        return (address[0] & 0xFF) << 24 | (address[1] & 0xFF) << 16 | (address[2] & 0xFF) << 8 | (address[3] & 0xFF);
    }
}
