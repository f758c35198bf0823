package io.switchml.dataplane;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.switchml.udp.RunShape;
import io.switchml.udp.UdpOffloads;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The result datagrams of one read of a switch port, gathered per recipient into runs (docs/ARCHITECTURE.md section
 * 17): a recipient's results that fit one {@link RunShape} go out as one segmented datagram that the kernel cuts into exactly
 * those datagrams. A multicast of r results to n workers is then n sends, not n x r. Nothing waits for a run: the port
 * writes the runs when the read that produced them ends.
 */
final class ResultRuns {
    /** Where a finished run goes: one datagram, or a segmented one of {@code segments} datagrams of {@code segmentBytes}. */
    @FunctionalInterface
    interface Out {
        void write(InetSocketAddress recipient, ByteBuf content, int segmentBytes, int segments);
    }

    /** A recipient's results not yet written, in a {@link RunShape}. */
    private static final class Run {
        private final RunShape shape = new RunShape();
        private final ByteBuf[] parts = new ByteBuf[UdpOffloads.MAX_SEGMENTS];
        private InetSocketAddress recipient;
    }

    private final Out out;
    private final Map<InetSocketAddress, Run> open = new HashMap<>();
    private final ArrayDeque<Run> spare = new ArrayDeque<>();
    private ByteBufAllocator allocator;

    ResultRuns(Out out) {
        this.out = out;
    }

    /**
     * Adds a result for {@code recipient}, taking ownership of {@code result}; a run it cannot join is written first.
     *
     * @param allocator where a run's composite buffer comes from (the port channel's)
     */
    void add(InetSocketAddress recipient, ByteBuf result, ByteBufAllocator allocator) {
        this.allocator = allocator;
        int length = result.readableBytes();
        Run run = open.get(recipient);
        if (run != null && !run.shape.add(length)) {
            open.remove(recipient);
            write(run);
            run = null;
        }
        if (run == null) {
            run = spare.isEmpty() ? new Run() : spare.pop();
            run.recipient = recipient;
            run.shape.add(length);
            open.put(recipient, run);
        }
        run.parts[run.shape.count() - 1] = result;
    }

    /** Whether results wait to be written. */
    boolean isEmpty() {
        return open.isEmpty();
    }

    /** Writes every open run. */
    void writeAll() {
        for (Run run : open.values()) {
            write(run);
        }
        open.clear();
    }

    private void write(Run run) {
        int count = run.shape.count();
        if (count == 1) {
            out.write(run.recipient, run.parts[0], run.shape.segmentBytes(), 1);
        } else {
            CompositeByteBuf content = allocator.compositeDirectBuffer(count);
            for (int i = 0; i < count; i++) {
                content.addComponent(true, run.parts[i]); // the composite owns them now
            }
            out.write(run.recipient, content, run.shape.segmentBytes(), count);
        }
        Arrays.fill(run.parts, 0, count, null);
        run.recipient = null;
        run.shape.clear();
        spare.push(run);
    }
}
