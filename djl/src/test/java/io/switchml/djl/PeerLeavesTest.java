package io.switchml.djl;

import ai.djl.Model;
import ai.djl.training.Trainer;
import io.switchml.api.RankLeftException;
import io.switchml.launch.InProcessSwitchJob;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rank fails on its own (here: it built another model) and closes its context, as a program's
 * try-with-resources does: the rank waiting for it fails with the leave, not the operation timeout.
 */
class PeerLeavesTest {
    @Test
    void aRankThatFailsAndClosesItsContextFailsTheOtherAtOnce() throws Exception {
        try (InProcessSwitchJob workers = new InProcessSwitchJob(2)) {
            List<Exception> failures = workers.run(ctx -> {
                try (Model model = Model.newInstance("mine"); Trainer trainer = Models.mlp(model, ctx.rank() == 0 ? 16 : 8, 1)) {
                    ParameterBroadcast.fromRank(ctx, model.getBlock(), 0);
                    return null;
                } catch (RuntimeException e) {
                    ctx.close();
                    return e;
                }
            });
            assertThat(failures.get(1)).as("rank 1 built another model").isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("differ from rank 0's");
            // The operation timeout is 30 s and run() would fail after 120 s: this is the leave, at once.
            assertThat(failures.get(0)).isInstanceOf(RankLeftException.class)
                    .hasMessageContaining("rank 1 left job").hasMessageContaining("after finishing 0 all-reduce(s)");
        }
    }
}
