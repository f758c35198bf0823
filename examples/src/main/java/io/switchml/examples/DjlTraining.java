package io.switchml.examples;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.EasyTrain;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import io.switchml.api.AllReduce;
import io.switchml.client.SwitchMLConfig;
import io.switchml.client.SwitchMLContext;
import io.switchml.djl.GradientSynchronizer;
import io.switchml.djl.ParameterBroadcast;
import io.switchml.djl.ParameterChecksum;
import io.switchml.djl.QuietEngine;

import java.util.Random;

/**
 * One rank of data-parallel DJL training through a running switch, on synthetic data:
 * {@code DjlTraining CONTROLLER_HOST:PORT JOB RANK WORKERS BATCHES}. Each rank holds its own
 * number of batches (they may differ); it prints its parameters' checksum at the end, the same on
 * every rank. One process per rank: DJL's PyTorch engine records one gradient tape per process.
 */
public final class DjlTraining {
    static final int FEATURES = 20;
    static final int CLASSES = 3;
    static final int BATCH_SIZE = 32;
    static final int EPOCHS = 2;

    private DjlTraining() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: DjlTraining CONTROLLER_HOST:PORT JOB RANK WORKERS BATCHES");
            System.exit(64);
        }
        QuietEngine.apply(); // before DJL loads: no "Failed to detect GPU count" on a CPU worker
        int rank = Integer.parseInt(args[2]);
        long checksum = run(args[0], args[1], rank, Integer.parseInt(args[3]), Integer.parseInt(args[4]));
        System.out.println("rank " + rank + " parameters " + Long.toHexString(checksum));
    }

    /** Trains this rank's shard of {@code batches} batches for {@link #EPOCHS} epochs; returns the parameters' checksum. */
    public static long run(String controller, String job, int rank, int workers, int batches) throws Exception {
        // README:djl:begin
        SwitchMLConfig config = SwitchMLConfig.builder()
                .controller(controller).job(job).rank(rank).workers(workers).build();
        SequentialBlock block = new SequentialBlock()
                .add(Linear.builder().setUnits(64).build()).add(Activation::relu)
                .add(Linear.builder().setUnits(CLASSES).build());
        try (AllReduce allReduce = SwitchMLContext.connect(config);            // this worker's rank of the job
             Model model = Model.newInstance("mlp")) {
            model.setBlock(block);
            GradientSynchronizer sync = new GradientSynchronizer(allReduce)   // gradients averaged over the ranks
                    .joinUnevenInputs();                                      // ranks may hold different numbers of batches
            DefaultTrainingConfig training = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                    .optDevices(new Device[]{Device.cpu()})                   // one device per rank
                    .optOptimizer(Optimizer.adam().build())
                    .addTrainingListeners(sync);
            try (Trainer trainer = model.newTrainer(training)) {
                trainer.initialize(new Shape(1, FEATURES));
                ParameterBroadcast.fromRank(allReduce, model.getBlock(), 0);   // everyone starts from rank 0's weights
                EasyTrain.fit(trainer, EPOCHS, shard(model.getNDManager(), rank, batches), null);
            }
            return ParameterChecksum.of(model.getBlock());                     // the same on every rank
        }
        // README:djl:end
    }

    /** This rank's data: {@code batches} batches of three Gaussian blobs, one per class, drawn from the rank's seed. */
    static ArrayDataset shard(NDManager manager, int rank, int batches) {
        Random random = new Random(rank);
        int n = batches * BATCH_SIZE;
        float[] x = new float[n * FEATURES];
        float[] y = new float[n];
        for (int i = 0; i < n; i++) {
            int label = random.nextInt(CLASSES);
            y[i] = label;
            for (int f = 0; f < FEATURES; f++) {
                x[i * FEATURES + f] = (float) random.nextGaussian() + (f % CLASSES == label ? 2f : 0f);
            }
        }
        return new ArrayDataset.Builder()
                .setData(manager.create(x, new Shape(n, FEATURES)))
                .optLabels(manager.create(y, new Shape(n)))
                .setSampling(BATCH_SIZE, false)
                .build();
    }
}
