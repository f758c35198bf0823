package io.switchml.dataplane;

import io.netty.channel.ChannelHandlerContext;
import io.switchml.ipc.IpcPoller;
import io.switchml.ipc.RequestRing;
import java.nio.ByteBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared-memory side of one switch port (docs/ARCHITECTURE.md section 11): reads the packets
 * co-located workers write to the port's request ring and runs them through the same
 * {@link SwitchProgram} as the port's UDP datagrams, on the same thread (the port's event loop), so
 * every slot keeps its single writer and the sums are the UDP path's bit for bit. Results go to the
 * job's board (see {@link ResultSender}); to workers over UDP in a job that has both kinds.
 */
final class IpcPort implements RequestRing.Consumer {
    private static final Logger LOG = LoggerFactory.getLogger(IpcPort.class);
    /** Packets read per poll before the loop serves its socket again. */
    private static final int PACKETS_PER_POLL = 16;

    private final RequestRing ring;
    private final int portIndex;
    private final SwitchProgram program;
    private final ChannelResultSink sink;
    private final ChannelHandlerContext context;
    private final IpcPoller poller;
    /** Records of dead writers the ring skipped so far, as counted. */
    private long unblocked;

    IpcPort(RequestRing ring, int portIndex, SwitchProgram program, ChannelResultSink sink, ChannelHandlerContext context) {
        this.ring = ring;
        this.portIndex = portIndex;
        this.program = program;
        this.sink = sink;
        this.context = context;
        this.poller = new IpcPoller(context.executor(), this::poll, ring.readerSleeping());
    }

    void start() {
        poller.start();
    }

    /** Reads what the ring holds; counts and reports the records of writers that died mid-write, which it skipped. */
    private int poll() {
        int read = ring.drain(this, PACKETS_PER_POLL);
        long skipped = ring.unblocked() - unblocked;
        if (skipped > 0) {
            unblocked += skipped;
            for (long i = 0; i < skipped; i++) {
                program.counters().increment(SwitchCounter.IPC_RECORDS_UNBLOCKED);
            }
            LOG.warn("shared-memory port {}: skipped a record that a worker claimed and never wrote (it died mid-write?);"
                    + " {} so far", portIndex, unblocked);
        }
        return read;
    }

    @Override
    public void packet(int sourceIpv4, int sourcePort, ByteBuffer packet) {
        sink.begin(context, null);
        try {
            program.processFromRing(sourceIpv4, sourcePort, portIndex, packet);
        } finally {
            sink.end();
        }
    }

    /** A worker rang: on the port's event loop. */
    void wakeUp() {
        poller.wake(true);
    }

    void close() {
        poller.close();
    }
}
