package io.switchml.protocol;

/** Numbers fixed by the SwitchML wire protocol, and the limits of this implementation. */
public final class ProtocolConstants {
    /** msg_type of an aggregation packet (worker to switch and switch to worker). */
    public static final int MSG_TYPE_AGGREGATION = 1;
    /** First UDP port of the switch; SwitchML accepts 0xBEE0 to 0xBEEF. */
    public static final int SWITCH_UDP_PORT = 0xBEE0;
    /** Number of UDP ports in SwitchML's range; the switch may run one receive queue per port. */
    public static final int SWITCH_UDP_PORT_COUNT = 16;
    /** TCP port of the controller (gRPC), as SwitchML's. */
    public static final int CONTROLLER_TCP_PORT = 50099;

    /** Bytes of the SwitchML header: msg_type/size, job_number, tsi, pool_index. */
    public static final int HEADER_BYTES = 8;
    /** Bytes of the two exponents that follow the header. */
    public static final int EXPONENT_BYTES = 2;
    /** Offset of the first payload element. */
    public static final int PAYLOAD_OFFSET = HEADER_BYTES + EXPONENT_BYTES;

    /** pool_index bits 13..0 hold the slot. */
    public static final int MAX_SLOTS = 1 << 14;
    /** pool_index bit 15 selects which of the slot's two copies ("set"). */
    public static final int SET_BIT = 1 << 15;

    /** Most workers in one job: the seen-bitmap is 256 bits wide (SwitchML's is 32). */
    public static final int MAX_WORKERS = 256;
    /** Job numbers are 8 bits. */
    public static final int MAX_JOBS = 256;

    private ProtocolConstants() {
    }
}
