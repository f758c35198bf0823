package io.switchml.client;

/**
 * The slots of one worker thread whose next packet waits for room in the congestion window, lowest
 * packet number first (a binary min-heap over preallocated arrays: nothing is allocated). The packet
 * number is the same at every worker of a job, so workers release the same packets in the same order
 * even when losses made their results arrive in different orders; see {@link WorkerLane}.
 */
final class ReadySlots {
    private final int[] slots;
    private final int[] packets;
    private int size;

    ReadySlots(int capacity) {
        this.slots = new int[capacity];
        this.packets = new int[capacity];
    }

    /** Slot {@code slot} waits to send packet {@code packet}; a slot is in here at most once. */
    void add(int slot, int packet) {
        if (size == slots.length) {
            throw new IllegalStateException("more ready slots than the " + slots.length + " the window has");
        }
        int i = size++;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            if (packets[parent] <= packet) {
                break;
            }
            slots[i] = slots[parent];
            packets[i] = packets[parent];
            i = parent;
        }
        slots[i] = slot;
        packets[i] = packet;
    }

    boolean isEmpty() {
        return size == 0;
    }

    int size() {
        return size;
    }

    /** The lowest waiting packet number; only when not empty. */
    int lowestPacket() {
        return packets[0];
    }

    /** Removes and returns the slot of the lowest waiting packet; only when not empty. */
    int poll() {
        int top = slots[0];
        int lastSlot = slots[--size];
        int lastPacket = packets[size];
        int i = 0;
        while (true) {
            int child = 2 * i + 1;
            if (child >= size) {
                break;
            }
            if (child + 1 < size && packets[child + 1] < packets[child]) {
                child++;
            }
            if (packets[child] >= lastPacket) {
                break;
            }
            slots[i] = slots[child];
            packets[i] = packets[child];
            i = child;
        }
        if (size > 0) {
            slots[i] = lastSlot;
            packets[i] = lastPacket;
        }
        return top;
    }

    void clear() {
        size = 0;
    }
}
