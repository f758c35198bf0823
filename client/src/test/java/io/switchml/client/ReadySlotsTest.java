package io.switchml.client;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ReadySlotsTest {
    @Test
    void pollsLowestPacketFirst() {
        ReadySlots ready = new ReadySlots(4);
        ready.add(2, 10);
        ready.add(0, 8);
        ready.add(3, 11);
        ready.add(1, 5);
        assertThat(ready.lowestPacket()).isEqualTo(5);
        List<Integer> order = new ArrayList<>();
        while (!ready.isEmpty()) {
            order.add(ready.poll());
        }
        assertThat(order).containsExactly(1, 0, 2, 3);
        assertThatThrownBy(() -> {
            ReadySlots full = new ReadySlots(1);
            full.add(0, 1);
            full.add(0, 2);
        }).hasMessageContaining("more ready slots than the 1");
    }

    @Test
    void agreesWithAPriorityQueueOnRandomSequences() {
        Random random = new Random(13);
        int window = 64;
        ReadySlots ready = new ReadySlots(window);
        PriorityQueue<int[]> reference = new PriorityQueue<>((a, b) -> Integer.compare(a[1], b[1]));
        boolean[] queued = new boolean[window];
        for (int step = 0; step < 100_000; step++) {
            if (!ready.isEmpty() && random.nextInt(3) == 0) {
                assertThat(ready.lowestPacket()).isEqualTo(reference.peek()[1]);
                int slot = ready.poll();
                int[] expected = reference.poll();
                assertThat(slot).isEqualTo(expected[0]);
                queued[slot] = false;
            } else {
                int slot = random.nextInt(window);
                if (!queued[slot]) {
                    int packet = slot + window * random.nextInt(1000); // distinct per slot: q mod window = slot
                    ready.add(slot, packet);
                    reference.add(new int[] {slot, packet});
                    queued[slot] = true;
                }
            }
            assertThat(ready.size()).isEqualTo(reference.size());
        }
        ready.clear();
        assertThat(ready.isEmpty()).isTrue();
    }
}
