package io.switchml.agent;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RegionSpaceTest {
    @Test
    void handsOutSpaceLikeARingAndStartsOverWhenNothingIsInFlight() {
        RegionSpace space = new RegionSpace(1024);
        assertThat(space.largest()).isEqualTo(512);
        assertThat(space.take(300)).isZero();
        assertThat(space.take(100)).isEqualTo(320);
        assertThat(space.take(500)).isEqualTo(448);
        assertThat(space.take(100)).as("not before the end, not before the oldest").isEqualTo(-1);
        space.giveBack();
        assertThat(space.take(200)).as("wrapped to the start, before the tensor at 320").isZero();
        assertThat(space.take(100)).as("between the wrapped one and the oldest: 256..320 is too small").isEqualTo(-1);
        space.giveBack();
        space.giveBack();
        space.giveBack();
        assertThat(space.take(64)).as("empty: from the start again").isZero();
        assertThatThrownBy(() -> space.take(513)).hasMessageContaining("exceed the 512");
    }
}
