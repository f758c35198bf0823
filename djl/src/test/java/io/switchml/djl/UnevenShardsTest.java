package io.switchml.djl;

import ai.djl.Model;
import ai.djl.ndarray.NDList;
import ai.djl.training.Trainer;
import io.switchml.api.StepCountMismatchException;
import io.switchml.launch.InProcessSwitchJob;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Ranks holding different numbers of batches, in this JVM through an embedded switch. */
class UnevenShardsTest {
    private static final int[] BATCHES = {4, 9, 6};
    private static InProcessSwitchJob workers;

    @BeforeAll
    static void start() {
        workers = new InProcessSwitchJob(BATCHES.length);
    }

    @AfterAll
    static void stop() {
        workers.close();
    }

    @Test
    void ranksThatRunOutJoinAndEveryRankEndsWithIdenticalParameters() throws Exception {
        int epochs = 2;
        List<long[]> results = workers.run(ctx -> {
            try (Model model = Model.newInstance("uneven"); Trainer trainer = Models.mlp(model, 16, 7 + ctx.rank())) {
                ParameterBroadcast.fromRank(ctx, model.getBlock(), 0);
                GradientSynchronizer sync = new GradientSynchronizer(ctx, 1024).joinUnevenInputs();
                long shadowed = 0;
                for (int epoch = 0; epoch < epochs; epoch++) {
                    for (int s = 0; s < BATCHES[ctx.rank()]; s++) {
                        NDList batch = Models.batch(trainer.getManager(), ctx.rank(), epoch * 100 + s, 16);
                        Models.backward(trainer, batch);
                        sync.synchronize(model.getBlock());
                        trainer.step();
                        batch.close();
                    }
                    shadowed += sync.join(trainer);
                }
                return new long[]{ParameterChecksum.of(model.getBlock()), sync.steps(), shadowed};
            }
        });
        for (int r = 0; r < BATCHES.length; r++) {
            assertThat(results.get(r)[0]).as("rank %d's parameters", r).isEqualTo(results.get(0)[0]);
            assertThat(results.get(r)[1]).isEqualTo((long) epochs * BATCHES[r]);
            assertThat(results.get(r)[1] + results.get(r)[2]).as("took part in every step").isEqualTo(epochs * 9L);
        }
    }

    @Test
    void withoutJoiningAStepCountMismatchFailsEveryRankAtTheEpochsEnd() throws Exception {
        List<String> failures = workers.run(ctx -> {
            try (Model model = Model.newInstance("strict"); Trainer trainer = Models.mlp(model, 8, 3)) {
                GradientSynchronizer sync = new GradientSynchronizer(ctx);
                try {
                    for (int s = 0; s < 2 + (ctx.rank() == 1 ? 1 : 0); s++) {
                        NDList batch = Models.batch(trainer.getManager(), ctx.rank(), s, 8);
                        Models.backward(trainer, batch);
                        sync.synchronize(model.getBlock());
                        trainer.step();
                        batch.close();
                    }
                    sync.finish();
                    return "no failure";
                } catch (StepCountMismatchException e) {
                    return e.getMessage();
                }
            }
        });
        assertThat(failures.get(0)).contains("rank 0 ended after 2 step(s) but 1 rank(s) still have data for step 3");
        assertThat(failures.get(2)).contains("rank 2 ended after 2 step(s)");
        assertThat(failures.get(1)).contains("rank 1 has data for step 3 but 2 rank(s) ended after 2 step(s)");
    }
}
