package io.switchml.collectives;

import io.switchml.api.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * Gradient compression baselines behind the same {@link io.switchml.api.AllReduce} interface, on
 * the ring's transport: {@code topk} (top-k sparsification with error feedback, {@link TopKCodec}) and
 * {@code qsgd} (stochastic quantization, {@link QsgdCodec}). A compressed tensor cannot be summed on
 * the way, so each worker encodes its float32 tensor into one message, the messages are exchanged by
 * all-gather around the ring ({@link RingAllGather}: each worker sends n-1 messages and receives as
 * many), and every worker decodes all n and adds them.
 *
 * <p>Numbers: element i's result is {@code s = 0; for r = 0..n-1: s = s + d[r][i]} in float32, where
 * d[r] is rank r's decoded message (top-k: its selected value or nothing; QSGD: its quantized value),
 * then for MEAN one division {@code s / (float) n}. Every rank decodes the same bytes in the same order,
 * so all get bit-identical results, which {@link TopKReference} and {@link QsgdReference} compute
 * locally. The result is the sum of the compressed tensors, not of the inputs: that is the point.
 *
 * <p>State per tensor ({@link TensorStates}): the top-k residual (and velocity, with momentum correction)
 * and the step that seeds QSGD's rounding are kept per input buffer; pass the same buffer for the same
 * gradient every step.
 *
 * <p>int32 all-reduces are not compressed: they go through the ring unchanged (exact wrapping sums), so
 * exact integer operations such as {@code ParameterBroadcast} keep working.
 */
public final class CompressedAllReduce extends RingAllReduce {
    private final Compression compression;
    private final TopKCodec topK;
    private final QsgdCodec qsgd;
    private final RingAllGather gather;
    private final TensorStates states = new TensorStates();
    private float[] input = new float[0];
    private float[] sum = new float[0];
    private ByteBuffer message = ByteBuffer.allocateDirect(0).order(ByteOrder.LITTLE_ENDIAN);

    private CompressedAllReduce(CollectiveConfig config, Poller poller, PeerConnector.Links links) {
        super(config, poller, links);
        this.compression = config.compression();
        this.topK = config.algorithm() == Algorithm.TOPK ? new TopKCodec(compression) : null;
        this.qsgd = config.algorithm() == Algorithm.QSGD ? new QsgdCodec(compression) : null;
        this.gather = config.workers() == 1 ? null
                : new RingAllGather(nextLink(), previousLink(), config.workers(), config.rank(), self);
    }

    /**
     * Connects to the ring neighbours and rank 0, and returns once they are all connected.
     *
     * @param listener this rank's bound endpoint, or null to bind {@code endpoints[rank]}; closed once connected
     */
    public static CompressedAllReduce open(CollectiveConfig config, Listener listener) {
        if (!config.algorithm().compressed()) {
            throw new IllegalArgumentException("a compressed all-reduce needs algorithm topk or qsgd, not " + config.algorithm());
        }
        return connect(config, listener, CompressedAllReduce::new);
    }

    /** The compression settings in use. */
    public Compression compression() {
        return compression;
    }

    @Override
    protected void execute(Operand operand, ReduceOp op, long sequence, String context) {
        if (operand.type() != ElementType.FLOAT32) {
            super.execute(operand, op, sequence, context); // int32: the exact ring
            return;
        }
        int length = operand.length();
        TensorStates.State state = states.of(operand.owner(), operand.ownerOffset(), length);
        if (input.length < length) {
            input = new float[length];
            sum = new float[length];
        }
        operand.readFloats(input);
        long step = state.steps;
        long bytes = topK != null ? topK.messageBytes(length, step) : qsgd.messageBytes(length);
        if (bytes > CompressedMessage.MAX_BYTES) {
            throw new IllegalArgumentException(context + ": the compressed tensor would take " + bytes + " bytes, over the "
                    + CompressedMessage.MAX_BYTES + " of one message; all-reduce it in parts");
        }
        ByteBuffer mine = messageBuffer((int) bytes);
        if (topK != null) {
            topK.encode(input, state.residual(), compression.momentum() > 0 ? state.velocity() : null, length, step, mine);
        } else {
            qsgd.encode(input, length, config.rank(), step, mine);
        }
        state.steps++;
        int n = config.workers();
        if (gather != null) {
            gather.start(sequence, op, mine);
            poller.complete(gather, Deadline.after(config.operationTimeout()), context);
        }
        Arrays.fill(sum, 0, length, 0f);
        for (int origin = 0; origin < n; origin++) {
            ByteBuffer block = origin == config.rank() ? mine.duplicate().order(ByteOrder.LITTLE_ENDIAN) : gather.block(origin);
            String from = context + ": rank " + origin;
            if (topK != null) {
                topK.addTo(block, sum, length, step, from);
            } else {
                qsgd.addTo(block, sum, length, from);
            }
        }
        if (op == ReduceOp.MEAN) {
            float d = n;
            for (int i = 0; i < length; i++) {
                sum[i] = sum[i] / d;
            }
        }
        operand.writeFloats(sum);
    }

    private ByteBuffer messageBuffer(int bytes) {
        if (message.capacity() < bytes) {
            message = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
        }
        return message.clear();
    }
}
