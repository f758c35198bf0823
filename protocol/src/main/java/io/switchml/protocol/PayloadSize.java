package io.switchml.protocol;

/**
 * The 3-bit size code of the header. Codes 0..3 are SwitchML's (the Tofino switch takes 1 and 3);
 * codes 4..7 are this project's extension for software switches: up to 8 KiB for 9000-byte jumbo
 * frames, and 60 KiB for loopback, where a datagram may carry up to 65507 bytes.
 */
public enum PayloadSize {
    B128(0, 128),
    B256(1, 256),
    B512(2, 512),
    B1024(3, 1024),
    B2048(4, 2048),
    B4096(5, 4096),
    B8192(6, 8192),
    /** The largest multiple of 4 KiB that fits one loopback datagram with the headers. */
    B61440(7, 61440);

    private static final PayloadSize[] BY_CODE = values();

    private final int code;
    private final int bytes;

    PayloadSize(int code, int bytes) {
        this.code = code;
        this.bytes = bytes;
    }

    public int code() {
        return code;
    }

    public int bytes() {
        return bytes;
    }

    /** int32 elements per packet. */
    public int elements() {
        return bytes / Integer.BYTES;
    }

    /** Bytes of a whole packet (the UDP payload) of this size. */
    public int packetBytes() {
        return ProtocolConstants.PAYLOAD_OFFSET + bytes;
    }

    /** The size for a code read off the wire; null for none (every 3-bit code is defined). */
    public static PayloadSize ofCode(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }

    /** The size that carries exactly this many elements, or an exception listing the choices. */
    public static PayloadSize ofElements(int elements) {
        for (PayloadSize s : BY_CODE) {
            if (s.elements() == elements) {
                return s;
            }
        }
        StringBuilder allowed = new StringBuilder();
        for (PayloadSize s : BY_CODE) {
            allowed.append(allowed.length() == 0 ? "" : ", ").append(s.elements());
        }
        throw new IllegalArgumentException("elements per packet must be one of " + allowed + ", not " + elements);
    }
}
