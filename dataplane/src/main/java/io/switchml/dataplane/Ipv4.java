package io.switchml.dataplane;

import io.switchml.protocol.Ipv4Addresses;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

/** IPv4 addresses as the int the worker table keys on, read without allocating on the packet path. */
final class Ipv4 {
    /**
     * OpenJDK's {@link Inet4Address#hashCode()} is the address itself, which reads it without the
     * byte[] copy of {@link InetAddress#getAddress()}. The specification does not promise it, so it
     * is checked once here and the copy is the fallback.
     */
    private static final boolean HASH_CODE_IS_ADDRESS = hashCodeIsAddress();

    private Ipv4() {
    }

    /** The address as a big-endian int (a.b.c.d is {@code a << 24 | b << 16 | c << 8 | d}). */
    static int toInt(InetAddress address) {
        if (!(address instanceof Inet4Address)) {
            throw new IllegalArgumentException(address + " is not an IPv4 address");
        }
        return HASH_CODE_IS_ADDRESS ? address.hashCode() : Ipv4Addresses.toInt(address.getAddress());
    }

    static InetAddress toAddress(int ipv4) {
        byte[] bytes = {(byte) (ipv4 >>> 24), (byte) (ipv4 >>> 16), (byte) (ipv4 >>> 8), (byte) ipv4};
        try {
            return InetAddress.getByAddress(bytes);
        } catch (UnknownHostException e) {
            throw new AssertionError("four bytes are always a valid IPv4 address", e);
        }
    }

    private static boolean hashCodeIsAddress() {
        try {
            int probe = 0xC0A8_81FE;
            InetAddress address = InetAddress.getByAddress(new byte[] {(byte) 0xC0, (byte) 0xA8, (byte) 0x81, (byte) 0xFE});
            return address.hashCode() == probe;
        } catch (UnknownHostException e) {
            return false;
        }
    }
}
