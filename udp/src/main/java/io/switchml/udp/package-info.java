/**
 * The UDP offloads the switch and the workers share: the {@code auto|on|off} settings and what the host allows of
 * segmented sends (GSO) and coalesced receives (GRO). See docs/ARCHITECTURE.md section 17.
 */
package io.switchml.udp;
