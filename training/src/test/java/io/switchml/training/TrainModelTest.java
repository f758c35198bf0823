package io.switchml.training;

import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.training.ParameterStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TrainModelTest {
    @ParameterizedTest
    @EnumSource(TrainModel.class)
    void eachModelHasTheParametersItClaimsAndMapsImagesToTenScores(TrainModel model) {
        try (NDManager manager = NDManager.newBaseManager()) {
            Block block = model.block();
            block.initialize(manager, DataType.FLOAT32, new Shape(1, FashionMnist.PIXELS));
            long parameters = block.getParameters().values().stream().mapToLong(p -> p.getArray().size()).sum();
            assertThat(parameters).isEqualTo(model.parameters());
            NDList scores = block.forward(new ParameterStore(manager, false),
                    new NDList(manager.randomUniform(0, 1, new Shape(3, FashionMnist.PIXELS))), false);
            assertThat(scores.singletonOrThrow().getShape()).isEqualTo(new Shape(3, FashionMnist.CLASSES));
        }
    }

    @Test
    void modelsByNameAndTheFrameworksThatTrainThem() {
        assertThat(TrainModel.named(" CNN ")).isEqualTo(TrainModel.CNN);
        assertThatThrownBy(() -> TrainModel.named("resnet")).hasMessage("unknown model 'resnet'; known: mlp, cnn");
        TrainPlan plan = new TrainPlan(Map.of(), Aggregation.switchMl(), 1, 32, 0.001f, 1, Path.of("/data"), 0, 4096);
        assertThat(plan.model()).as("the perceptron unless told otherwise").isEqualTo(TrainModel.MLP);
        TrainPlan cnn = plan.withModel(TrainModel.CNN);
        assertThat(TrainPlan.fromJson(cnn.toJson())).isEqualTo(cnn);
        assertThat(cnn.withAggregation(Aggregation.named("ring")).model()).isEqualTo(TrainModel.CNN);
        assertThatThrownBy(() -> cnn.withFramework(Framework.TENSORFLOW))
                .hasMessage("--framework tensorflow trains the perceptron only; --model cnn trains with djl");
    }
}
