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
    /** The ring's file shrank: the port reads it no more. */
    private boolean broken;
    /** The last poll found nothing: the next one, after a pause, first checks that the ring's file is whole. */
    private boolean idle = true;
    private boolean boardFaultLogged;

    IpcPort(RequestRing ring, int portIndex, SwitchProgram program, ChannelResultSink sink, ChannelHandlerContext context,
            long spinNanos) {
        this.ring = ring;
        this.portIndex = portIndex;
        this.program = program;
        this.sink = sink;
        this.context = context;
        this.poller = new IpcPoller(context.executor(), this::poll, this::fault, ring.readerSleeping(), spinNanos);
    }

    void start() {
        poller.start();
    }

    /** Reads what the ring holds; counts and reports the records of writers that died mid-write, which it skipped. */
    private int poll() {
        if (broken) {
            return 0;
        }
        // After a pause (a wake-up, the backstop, an idle spin), a look at the file's size before its pages: a ring
        // truncated while the port was idle is found without touching it, so no SIGBUS (whose late error the JVM may
        // raise anywhere on this thread) comes of it. While records flow, the guards below are the only line.
        if (idle && ring.shrank()) {
            ringBroken();
            return 0;
        }
        int read;
        try {
            read = ring.drain(this, PACKETS_PER_POLL);
        } catch (InternalError e) {
            fault(e);
            return 0;
        } finally {
            sink.flush(); // the wake-ups and UDP results of the records drained, in one send
        }
        idle = read == 0;
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
        } catch (InternalError e) {
            if (!ring.whole()) {
                throw e; // the ring itself: poll stops the port
            }
            boardFault();
        } finally {
            sink.end();
        }
    }

    /**
     * The JVM turned the SIGBUS of a mapped page that is gone into this error, raised after the access that caused it,
     * wherever this thread was then. When the ring shrank, the port stops reading it and the switch goes on over UDP;
     * with the ring whole it was a job's board.
     */
    private void fault(InternalError e) {
        if (ring.whole()) {
            boardFault();
            return;
        }
        ringBroken();
    }

    /** The ring's file shrank: the port stops reading it, once, and says so. */
    private void ringBroken() {
        if (!broken) {
            broken = true;
            poller.close(); // its wake flag is in the ring's file too
            program.counters().increment(SwitchCounter.IPC_RINGS_BROKEN);
            LOG.error("shared-memory port {}: the file of its request ring shrank under the switch (a process of the"
                    + " switch's user truncated it); the port reads it no more and the switch goes on over UDP. Workers of"
                    + " this host that used it fail their operations; restart them (they then use UDP, or restart the"
                    + " switch for a new port)", portIndex);
        }
    }

    /**
     * A late fault that reached the port's thread outside its own reads (the event loop's I/O step, another task):
     * handled as {@link #fault}; returns true, since only this port's files are mapped on its thread.
     */
    boolean lateFault(InternalError e) {
        fault(e);
        return true;
    }

    /**
     * A job's board file shrank: its results cannot reach its workers here, which notice it and fail their
     * operations; the other jobs go on.
     */
    private void boardFault() {
        program.counters().increment(SwitchCounter.IPC_BOARD_FAULTS);
        if (!boardFaultLogged) {
            boardFaultLogged = true;
            LOG.error("shared-memory port {}: a job's result board shrank under the switch (a process of the switch's"
                    + " user truncated it); that job's results are not delivered to its workers on this host, which"
                    + " fail their operations; other jobs go on (counted as ipc_board_faults)", portIndex);
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
