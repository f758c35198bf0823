package io.switchml.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

class SlotRoundsTest {

    @Test
    void everySlotStartsOnSetZeroAndFlipsOnEachTake() {
        SlotRounds sets = new SlotRounds(3);
        assertThat(sets.slots()).isEqualTo(3);
        assertThat(SlotRounds.setOf(sets.take(1))).isZero();
        assertThat(SlotRounds.setOf(sets.take(1))).isOne();
        assertThat(SlotRounds.setOf(sets.take(1))).isZero();
        assertThat(SlotRounds.setOf(sets.take(1))).isOne();
    }

    @Test
    void slotsFlipIndependently() {
        SlotRounds sets = new SlotRounds(4);
        assertThat(SlotRounds.setOf(sets.take(0))).isZero();
        assertThat(SlotRounds.setOf(sets.take(0))).isOne();
        assertThat(SlotRounds.setOf(sets.take(0))).isZero();
        // Slot 2 was never used: still on set 0 after slot 0 flipped three times.
        assertThat(SlotRounds.setOf(sets.peek(2))).isZero();
        assertThat(SlotRounds.setOf(sets.take(2))).isZero();
        assertThat(SlotRounds.setOf(sets.peek(0))).isOne();
        assertThat(SlotRounds.setOf(sets.peek(1))).isZero();
        assertThat(SlotRounds.setOf(sets.peek(3))).isZero();
    }

    @Test
    void peekDoesNotFlip() {
        SlotRounds sets = new SlotRounds(2);
        assertThat(SlotRounds.setOf(sets.peek(1))).isZero();
        assertThat(SlotRounds.setOf(sets.peek(1))).isZero();
        assertThat(SlotRounds.setOf(sets.take(1))).isZero();
        assertThat(SlotRounds.setOf(sets.peek(1))).isOne();
        assertThat(SlotRounds.setOf(sets.peek(1))).isOne();
        assertThat(SlotRounds.setOf(sets.take(1))).isOne();
        assertThat(SlotRounds.setOf(sets.peek(1))).isZero();
    }

    @Test
    void stateCarriesOverFromOneAllReduceToTheNext() {
        // One worker thread, window 4: an all-reduce of 6 blocks without bootstrap uses slots
        // 0,1,2,3,0,1; the next all-reduce must start slots 0 and 1 on set 0 and slots 2, 3 on set 1.
        SlotRounds sets = new SlotRounds(4);
        SlotSchedule first = new SlotSchedule(6, 4, false);
        int[] lastSet = new int[4];
        for (int q = 0; q < first.endPacket(); q++) {
            lastSet[first.slotOf(q)] = SlotRounds.setOf(sets.take(first.slotOf(q)));
        }
        SlotSchedule second = new SlotSchedule(4, 4, false);
        for (int slot = 0; slot < 4; slot++) {
            int set = SlotRounds.setOf(sets.take(second.slotOf(second.firstPacket(slot))));
            assertThat(set).as("slot %d", slot).isEqualTo(1 - lastSet[slot]);
        }
        assertThat(lastSet).containsExactly(1, 1, 0, 0);
    }

    @Test
    void noSlotEverUsesTheSameCopyTwiceInARow() {
        SlotRounds sets = new SlotRounds(8);
        int[] previous = {-1, -1, -1, -1, -1, -1, -1, -1};
        // Several all-reduces of different sizes back to back, with and without bootstrap.
        int[][] jobs = {{13, 1}, {3, 0}, {40, 1}, {7, 0}, {0, 1}, {8, 1}};
        for (int[] job : jobs) {
            SlotSchedule s = new SlotSchedule(job[0], 8, job[1] == 1);
            for (int slot = 0; slot < 8; slot++) {
                for (int q = s.firstPacket(slot); q != -1; q = s.nextPacket(q)) {
                    int set = SlotRounds.setOf(sets.take(s.slotOf(q)));
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
        SlotRounds sets = new SlotRounds(slots);
        int[] takes = new int[slots];
        for (int i = 0; i < ops.size(); i++) {
            int slot = ops.get(i) % slots;
            boolean peek = i < peeks.size() && peeks.get(i);
            if (peek) {
                assertThat(SlotRounds.setOf(sets.peek(slot))).isEqualTo(takes[slot] & 1);
            } else {
                assertThat(SlotRounds.setOf(sets.take(slot))).isEqualTo(takes[slot] & 1);
                takes[slot]++;
            }
        }
        for (int slot = 0; slot < slots; slot++) {
            assertThat(SlotRounds.setOf(sets.peek(slot))).isEqualTo(takes[slot] & 1);
        }
    }

    @Test
    void roundsCountEveryTakeOfTheirSlot() {
        SlotRounds rounds = new SlotRounds(3);
        assertThat(rounds.take(2)).isZero();
        assertThat(rounds.take(2)).isOne();
        assertThat(rounds.peek(2)).isEqualTo(2);
        assertThat(rounds.take(2)).isEqualTo(2);
        assertThat(rounds.peek(0)).isZero();
        assertThat(SlotRounds.setOf(5)).isOne();
        assertThat(SlotRounds.setOf(-2)).isZero();
    }

    @Test
    void slotOutsideTheWindowIsAnError() {
        SlotRounds sets = new SlotRounds(2);
        assertThatThrownBy(() -> SlotRounds.setOf(sets.take(2))).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> SlotRounds.setOf(sets.peek(-1))).isInstanceOf(IndexOutOfBoundsException.class);
    }
}
