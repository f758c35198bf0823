package io.switchml.dataplane;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.switchml.udp.UdpOffloads;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The result datagrams of one read of a switch port, gathered per recipient into runs (docs/ARCHITECTURE.md section
 * 17): a recipient's results of one length, the last of a run possibly shorter, at most {@link UdpOffloads#MAX_SEGMENTS}
 * and {@link UdpOffloads#MAX_DATAGRAM_BYTES} bytes, go out as one segmented datagram that the kernel cuts into exactly
 * those datagrams. A multicast of r results to n workers is then n sends, not n x r. Nothing waits for a run: the port
 * writes the runs when the read that produced them ends.
 */
final class ResultRuns {
    /** Where a finished run goes: one datagram, or a segmented one of {@code segments} datagrams of {@code segmentBytes}. */
    @FunctionalInterface
    interface Out {
        void write(InetSocketAddress recipient, ByteBuf content, int segmentBytes, int segments);
    }

    /** A recipient's results not yet written: retained buffers of one length, the last possibly shorter. */
    private static final class Run {
        private final ByteBuf[] parts = new ByteBuf[UdpOffloads.MAX_SEGMENTS];
        private InetSocketAddress recipient;
        private int count;
        private int segmentBytes;
        private int bytes;

        boolean accepts(int length) {
            boolean lastWasShort = bytes != count * segmentBytes;
            return !lastWasShort && length <= segmentBytes && count < parts.length
                    && bytes + length <= UdpOffloads.MAX_DATAGRAM_BYTES;
        }

        void append(ByteBuf result) {
            parts[count++] = result;
            bytes += result.readableBytes();
        }
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
        if (run != null && !run.accepts(length)) {
            open.remove(recipient);
            write(run);
            run = null;
        }
        if (run == null) {
            run = spare.isEmpty() ? new Run() : spare.pop();
            run.recipient = recipient;
            run.segmentBytes = length;
            open.put(recipient, run);
        }
        run.append(result);
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
        if (run.count == 1) {
            out.write(run.recipient, run.parts[0], run.segmentBytes, 1);
        } else {
            CompositeByteBuf content = allocator.compositeDirectBuffer(run.count);
            for (int i = 0; i < run.count; i++) {
                content.addComponent(true, run.parts[i]); // the composite owns them now
            }
            out.write(run.recipient, content, run.segmentBytes, run.count);
        }
        java.util.Arrays.fill(run.parts, 0, run.count, null);
        run.recipient = null;
        run.count = 0;
        run.bytes = 0;
        spare.push(run);
    }
}
