package io.switchml.launch;

import io.switchml.collectives.Compression;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An all-reduce algorithm that launchers run by name: {@code switchml} (in-network aggregation through a
 * switch) and the baselines {@code ring}, {@code ps}, {@code topk} and {@code qsgd}, each one class. The
 * bench's {@code --algo}, training's {@code --aggregation}, worker plans, Spark's barrier options, the
 * PyTorch agent's {@code --algo} ({@code SWITCHML_ALGO}) and {@code switchml algorithms} all read the one
 * registry of them ({@link AlgorithmRegistry}).
 *
 * <p>To add one (docs/ARCHITECTURE.md section 1): write a class implementing this interface, with a
 * public no-argument constructor, and name it in {@code META-INF/services/io.switchml.launch.AllReduceAlgorithm}
 * of its jar; every launcher then runs it, the bench verifies its results against {@link #exactSum}, and
 * nothing else changes.
 */
public interface AllReduceAlgorithm {
    /** The name in {@code --algo}, worker plans and the rows' {@code algo} field: lower case, unique. */
    String id();

    /** One line for help texts and {@code switchml algorithms}: what it does, in words. */
    String summary();

    /**
     * Opens this worker's all-reduce; returns once it is connected to what it needs (the switch, its peers).
     *
     * @param settings    the worker's {@code switchml.*} settings (rank, workers, controller, local address, ...)
     * @param compression the settings of compressing algorithms; others ignore it
     * @param peers       how a worker that needs its peers' endpoints exchanges them with its launcher
     */
    WorkerConnection open(Map<String, String> settings, Compression compression, WorkerConnection.PeerExchange peers);

    /** The exact float32 SUM this algorithm computes, bit for bit, for the bench's verifier ({@code --verify}). */
    ExactSum exactSum(ExactSum.Context context);

    /** Whether its workers need a switch (and the launcher embeds one): {@code switchml}. */
    default boolean needsSwitch() {
        return false;
    }

    /** Whether its workers exchange their endpoints through the launcher ({@link WorkerConnection.PeerExchange}). */
    default boolean exchangesEndpoints() {
        return !needsSwitch();
    }

    /** Whether its float32 result is the sum of compressed tensors ({@code topk}, {@code qsgd}), not of the inputs. */
    default boolean compressed() {
        return false;
    }

    /** Its compression settings in words, for progress lines ("top-k 1 % with error feedback"); null when it takes none. */
    default String describe(Compression compression) {
        return null;
    }

    /**
     * Whether it can carry the optimizer's momentum itself (top-k's momentum correction, as in DGC): training then
     * defaults to momentum SGD with the momentum moved into the compressor.
     */
    default boolean correctsMomentum() {
        return false;
    }

    /** The registered algorithm of that name (case-insensitive), or an error listing the known names. */
    static AllReduceAlgorithm named(String name) {
        return AlgorithmRegistry.named(name);
    }

    /** The registered algorithm of that name (case-insensitive), if there is one. */
    static Optional<AllReduceAlgorithm> find(String name) {
        return AlgorithmRegistry.find(name);
    }

    /** Every registered algorithm: the built-ins first ({@code switchml} leading), then the others as found. */
    static List<AllReduceAlgorithm> all() {
        return AlgorithmRegistry.all();
    }

    /** The registered names, comma-separated, for messages: {@code switchml, ring, ps, topk, qsgd}. */
    static String ids() {
        return AlgorithmRegistry.ids();
    }

    /** {@code switchml}, the algorithm the launchers run when none is named. */
    static AllReduceAlgorithm switchMl() {
        return named(SwitchMlAlgorithm.ID);
    }
}
