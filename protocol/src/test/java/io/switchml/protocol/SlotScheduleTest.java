package io.switchml.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class SlotScheduleTest {

    private static boolean carriesSomething(SlotSchedule s, int q) {
        return s.dataBlock(q) != -1 || s.exponentBlock(q) != -1;
    }

    /** blocksAhead counts the blocks that follow q's exponent block on q's slot, within the share and the limit. */
    @Property(tries = 300)
    void blocksAheadAreTheSlotsLaterBlocks(
            @ForAll @IntRange(min = 0, max = 3000) int blocks,
            @ForAll @IntRange(min = 1, max = 64) int window,
            @ForAll @IntRange(min = 0, max = 100) int limit) {
        SlotSchedule s = new SlotSchedule(blocks, window, true);
        for (int q = 0; q < s.endPacket(); q++) {
            int e = s.exponentBlock(q);
            int expected = 0;
            if (e >= 0) {
                for (int b = e + window; b < blocks && expected < limit; b += window) {
                    assertThat(s.slotOf(b + window)).isEqualTo(s.slotOf(q)); // b's exponent goes on q's slot too
                    expected++;
                }
            }
            assertThat(s.blocksAhead(q, limit)).as("packet %d", q).isEqualTo(expected);
        }
    }

    /** Walks every slot's chain; returns, per packet, the slot chain and position it was met at. */
    @Property(tries = 400)
    void chainsVisitEveryUsefulPacketOnceAndCarryEveryBlockOnce(
            @ForAll @IntRange(min = 0, max = 5000) int blocks,
            @ForAll @IntRange(min = 1, max = 64) int window,
            @ForAll boolean bootstrap) {
        SlotSchedule s = new SlotSchedule(blocks, window, bootstrap);
        assertThat(s.blocks()).isEqualTo(blocks);
        assertThat(s.window()).isEqualTo(window);
        int end = s.endPacket();
        assertThat(end).isEqualTo(blocks == 0 ? 0 : blocks + (bootstrap ? window : 0));
        assertThat(end).isLessThanOrEqualTo(SlotSchedule.MAX_PACKETS);

        int[] visits = new int[end];
        int[] chainOf = new int[end];
        int[] dataPacket = new int[blocks];
        int[] exponentPacket = new int[blocks];
        Arrays.fill(dataPacket, -1);
        Arrays.fill(exponentPacket, -1);
        int visited = 0;
        int usedSlots = 0;

        for (int slot = 0; slot < window; slot++) {
            int q = s.firstPacket(slot);
            if (q == -1) {
                // Only slots beyond the number of blocks are idle.
                assertThat(slot).isGreaterThanOrEqualTo(blocks);
                continue;
            }
            usedSlots++;
            assertThat(q).isEqualTo(slot);
            int previous = -1;
            while (q != -1) {
                assertThat(q).isBetween(0, end - 1);
                assertThat(s.slotOf(q)).isEqualTo(slot);
                if (previous != -1) {
                    assertThat(q).isEqualTo(previous + window);
                }
                visits[q]++;
                chainOf[q] = slot;
                visited++;
                assertThat(carriesSomething(s, q)).as("packet %d carries something", q).isTrue();

                int d = s.dataBlock(q);
                if (d != -1) {
                    assertThat(d).isBetween(0, blocks - 1);
                    assertThat(dataPacket[d]).as("block %d's data in two packets", d).isEqualTo(-1);
                    dataPacket[d] = q;
                }
                int e = s.exponentBlock(q);
                if (e != -1) {
                    assertThat(bootstrap).isTrue();
                    assertThat(e).isBetween(0, blocks - 1);
                    assertThat(exponentPacket[e]).as("block %d's exponent in two packets", e).isEqualTo(-1);
                    exponentPacket[e] = q;
                    // The exponent travels exactly one window ahead of its block's values.
                    assertThat(s.dataBlock(q + window)).isEqualTo(e);
                    assertThat(s.nextPacket(q)).isEqualTo(q + window);
                }
                previous = q;
                q = s.nextPacket(q);
            }
            // The chain ends at the last packet number of this slot below endPacket.
            assertThat(previous + window).isGreaterThanOrEqualTo(end);
        }

        assertThat(usedSlots).isEqualTo(Math.min(blocks, window));
        // Every packet that carries something was visited exactly once, the others never.
        for (int q = 0; q < end; q++) {
            assertThat(visits[q]).as("visits of packet %d", q).isEqualTo(carriesSomething(s, q) ? 1 : 0);
        }
        assertThat(s.packetCount()).isEqualTo(visited);

        for (int b = 0; b < blocks; b++) {
            assertThat(dataPacket[b]).as("data of block %d", b).isNotEqualTo(-1);
            if (bootstrap) {
                assertThat(exponentPacket[b]).as("exponent of block %d", b).isNotEqualTo(-1);
                assertThat(exponentPacket[b]).isEqualTo(dataPacket[b] - window);
                assertThat(chainOf[exponentPacket[b]]).isEqualTo(chainOf[dataPacket[b]]);
            } else {
                assertThat(exponentPacket[b]).isEqualTo(-1);
                assertThat(dataPacket[b]).isEqualTo(b);
            }
        }
    }

    @Property(tries = 300)
    void packetNumbersMapToSlotsModuloTheWindow(
            @ForAll @IntRange(min = 1, max = 5000) int blocks,
            @ForAll @IntRange(min = 1, max = 64) int window,
            @ForAll boolean bootstrap,
            @ForAll @IntRange(min = 0, max = 10_000) int q) {
        SlotSchedule s = new SlotSchedule(blocks, window, bootstrap);
        assertThat(s.slotOf(q)).isEqualTo(q % window).isBetween(0, window - 1);
        if (q < s.endPacket()) {
            assertThat(s.dataBlock(q)).isEqualTo(bootstrap ? (q >= window ? q - window : -1) : q);
            assertThat(s.exponentBlock(q)).isEqualTo(bootstrap && q < blocks ? q : -1);
        }
    }

    @Test
    void smallBootstrapScheduleByHand() {
        // 5 blocks, window 2, float32: packets 0..6.
        SlotSchedule s = new SlotSchedule(5, 2, true);
        assertThat(s.endPacket()).isEqualTo(7);
        assertThat(s.packetCount()).isEqualTo(7);
        int[] data = new int[7];
        int[] exps = new int[7];
        int[] slots = new int[7];
        for (int q = 0; q < 7; q++) {
            data[q] = s.dataBlock(q);
            exps[q] = s.exponentBlock(q);
            slots[q] = s.slotOf(q);
        }
        assertThat(exps).containsExactly(0, 1, 2, 3, 4, -1, -1);
        assertThat(data).containsExactly(-1, -1, 0, 1, 2, 3, 4);
        assertThat(slots).containsExactly(0, 1, 0, 1, 0, 1, 0);
        assertThat(chain(s, 0)).containsExactly(0, 2, 4, 6);
        assertThat(chain(s, 1)).containsExactly(1, 3, 5);
    }

    @Test
    void fewerBlocksThanTheWindowLeavesSlotsIdle() {
        // 2 blocks, window 4, float32: packets 0, 1 carry exponents, 4, 5 the values; 2, 3 nothing.
        SlotSchedule s = new SlotSchedule(2, 4, true);
        assertThat(s.endPacket()).isEqualTo(6);
        assertThat(s.packetCount()).isEqualTo(4);
        assertThat(chain(s, 0)).containsExactly(0, 4);
        assertThat(chain(s, 1)).containsExactly(1, 5);
        assertThat(s.firstPacket(2)).isEqualTo(-1);
        assertThat(s.firstPacket(3)).isEqualTo(-1);
    }

    @Test
    void int32ScheduleHasNoBootstrap() {
        SlotSchedule s = new SlotSchedule(5, 2, false);
        assertThat(s.endPacket()).isEqualTo(5);
        assertThat(s.packetCount()).isEqualTo(5);
        assertThat(chain(s, 0)).containsExactly(0, 2, 4);
        assertThat(chain(s, 1)).containsExactly(1, 3);
        for (int q = 0; q < 5; q++) {
            assertThat(s.dataBlock(q)).isEqualTo(q);
            assertThat(s.exponentBlock(q)).isEqualTo(-1);
        }
    }

    @Test
    void emptyScheduleSendsNothing() {
        for (boolean bootstrap : new boolean[] {false, true}) {
            SlotSchedule s = new SlotSchedule(0, 8, bootstrap);
            assertThat(s.endPacket()).isZero();
            assertThat(s.packetCount()).isZero();
            for (int slot = 0; slot < 8; slot++) {
                assertThat(s.firstPacket(slot)).isEqualTo(-1);
            }
        }
    }

    @Test
    void invalidSizesAreRejected() {
        assertThatThrownBy(() -> new SlotSchedule(-1, 4, false))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("-1");
        assertThatThrownBy(() -> new SlotSchedule(4, 0, true))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("window 0");
        assertThatThrownBy(() -> new SlotSchedule(4, -3, false))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void packetNumbersMustFitTwentyFourBits() {
        assertThat(SlotSchedule.MAX_PACKETS).isEqualTo(1 << 24);

        SlotSchedule most = new SlotSchedule(SlotSchedule.MAX_PACKETS, 1, false);
        assertThat(most.endPacket()).isEqualTo(SlotSchedule.MAX_PACKETS);
        assertThat(most.packetCount()).isEqualTo(SlotSchedule.MAX_PACKETS);
        assertThatThrownBy(() -> new SlotSchedule(SlotSchedule.MAX_PACKETS + 1, 1, false))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(String.valueOf(SlotSchedule.MAX_PACKETS + 1))
                .hasMessageContaining("exceed the " + SlotSchedule.MAX_PACKETS)
                .hasMessageContaining("use more threads or larger packets");
        assertThatThrownBy(() -> new SlotSchedule(Integer.MAX_VALUE, 64, true))
                .isInstanceOf(IllegalArgumentException.class);

        // With a bootstrap round the window's extra packets count too.
        int window = 32;
        SlotSchedule boot = new SlotSchedule(SlotSchedule.MAX_PACKETS - window, window, true);
        assertThat(boot.endPacket()).isEqualTo(SlotSchedule.MAX_PACKETS);
        assertThat(boot.nextPacket(SlotSchedule.MAX_PACKETS - 1)).isEqualTo(-1);
        assertThat(boot.dataBlock(SlotSchedule.MAX_PACKETS - 1)).isEqualTo(SlotSchedule.MAX_PACKETS - window - 1);
        assertThatThrownBy(() -> new SlotSchedule(SlotSchedule.MAX_PACKETS - window + 1, window, true))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("exceed the " + (SlotSchedule.MAX_PACKETS - window));
    }

    private static List<Integer> chain(SlotSchedule s, int slot) {
        List<Integer> out = new ArrayList<>();
        for (int q = s.firstPacket(slot); q != -1; q = s.nextPacket(q)) {
            out.add(q);
        }
        return out;
    }
}
