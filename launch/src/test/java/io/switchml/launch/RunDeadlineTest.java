package io.switchml.launch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A run's deadline: zero is no limit, a positive duration passes, a negative one is refused. */
class RunDeadlineTest {
    @Test
    void zeroNeverPasses() throws InterruptedException {
        RunDeadline none = RunDeadline.after(Duration.ZERO);
        Thread.sleep(5);
        assertThat(none.passed()).isFalse();
    }

    @Test
    void aPositiveOnePassesOnceItsTimeIsUp() throws InterruptedException {
        RunDeadline soon = RunDeadline.after(Duration.ofNanos(1));
        Thread.sleep(1);
        assertThat(soon.passed()).isTrue();
        assertThat(RunDeadline.after(Duration.ofDays(1)).passed()).isFalse();
    }

    @Test
    void aNegativeOneIsRefused() {
        assertThatThrownBy(() -> RunDeadline.after(Duration.ofSeconds(-1))).hasMessageContaining("cannot be negative");
    }
}
