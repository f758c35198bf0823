package io.switchml.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class SetAlternationTest {

    @Test
    void everySlotStartsOnSetZeroAndFlipsOnEachTake() {
        SetAlternation sets = new SetAlternation(3);
        assertThat(sets.slots()).isEqualTo(3);
        assertThat(sets.take(1)).isZero();
        assertThat(sets.take(1)).isOne();
        assertThat(sets.take(1)).isZero();
        assertThat(sets.take(1)).isOne();
    }

    @Test
    void slotsFlipIndependently() {
        SetAlternation sets = new SetAlternation(4);
        assertThat(sets.take(0)).isZero();
        assertThat(sets.take(0)).isOne();
        assertThat(sets.take(0)).isZero();
        // Slot 2 was never used: still on set 0 after slot 0 flipped three times.
        assertThat(sets.peek(2)).isZero();
        assertThat(sets.take(2)).isZero();
        assertThat(sets.peek(0)).isOne();
        assertThat(sets.peek(1)).isZero();
        assertThat(sets.peek(3)).isZero();
    }

    @Test
    void peekDoesNotFlip() {
        SetAlternation sets = new SetAlternation(2);
        assertThat(sets.peek(1)).isZero();
        assertThat(sets.peek(1)).isZero();
        assertThat(sets.take(1)).isZero();
        assertThat(sets.peek(1)).isOne();
        assertThat(sets.peek(1)).isOne();
        assertThat(sets.take(1)).isOne();
        assertThat(sets.peek(1)).isZero();
    }

    @Test
    void stateCarriesOverFromOneAllReduceToTheNext() {
        // One worker thread, window 4: an all-reduce of 6 blocks without bootstrap uses slots
        // 0,1,2,3,0,1; the next all-reduce must start slots 0 and 1 on set 0 and slots 2, 3 on set 1.
        SetAlternation sets = new SetAlternation(4);
        SlotSchedule first = new SlotSchedule(6, 4, false);
        int[] lastSet = new int[4];
        for (int q = 0; q < first.endPacket(); q++) {
            lastSet[first.slotOf(q)] = sets.take(first.slotOf(q));
        }
        SlotSchedule second = new SlotSchedule(4, 4, false);
        for (int slot = 0; slot < 4; slot++) {
            int set = sets.take(second.slotOf(second.firstPacket(slot)));
            assertThat(set).as("slot %d", slot).isEqualTo(1 - lastSet[slot]);
        }
        assertThat(lastSet).containsExactly(1, 1, 0, 0);
    }

    @Test
    void noSlotEverUsesTheSameCopyTwiceInARow() {
        SetAlternation sets = new SetAlternation(8);
        int[] previous = {-1, -1, -1, -1, -1, -1, -1, -1};
        // Several all-reduces of different sizes back to back, with and without bootstrap.
        int[][] jobs = {{13, 1}, {3, 0}, {40, 1}, {7, 0}, {0, 1}, {8, 1}};
        for (int[] job : jobs) {
            SlotSchedule s = new SlotSchedule(job[0], 8, job[1] == 1);
            for (int slot = 0; slot < 8; slot++) {
                for (int q = s.firstPacket(slot); q != -1; q = s.nextPacket(q)) {
                    int set = sets.take(s.slotOf(q));
                    assertThat(set).isNotEqualTo(previous[slot]);
                    previous[slot] = set;
                }
            }
        }
    }

    @Property(tries = 200)
    void setIsTheParityOfThePreviousTakes(
            @ForAll @IntRange(min = 1, max = 64) int slots,
            @ForAll @Size(max = 500) List<@IntRange(min = 0, max = 1023) Integer> ops,
            @ForAll @Size(max = 500) List<Boolean> peeks) {
        SetAlternation sets = new SetAlternation(slots);
        int[] takes = new int[slots];
        for (int i = 0; i < ops.size(); i++) {
            int slot = ops.get(i) % slots;
            boolean peek = i < peeks.size() && peeks.get(i);
            if (peek) {
                assertThat(sets.peek(slot)).isEqualTo(takes[slot] & 1);
            } else {
                assertThat(sets.take(slot)).isEqualTo(takes[slot] & 1);
                takes[slot]++;
            }
        }
        for (int slot = 0; slot < slots; slot++) {
            assertThat(sets.peek(slot)).isEqualTo(takes[slot] & 1);
        }
    }

    @Test
    void slotOutsideTheWindowIsAnError() {
        SetAlternation sets = new SetAlternation(2);
        assertThatThrownBy(() -> sets.take(2)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> sets.peek(-1)).isInstanceOf(IndexOutOfBoundsException.class);
    }
}
