package io.switchml.dataplane;

import io.netty.channel.ChannelHandlerContext;
import io.switchml.ipc.IpcPoller;
import io.switchml.ipc.RequestRing;
import io.switchml.ipc.SleepNotice;
import io.switchml.protocol.ProtocolConstants;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The shared-memory side of one switch port (docs/ARCHITECTURE.md section 11): reads the packets
 * co-located workers write to the request rings of the installed jobs for this port and runs them
 * through the same {@link SwitchProgram} as the port's UDP datagrams, on the same thread (the port's
 * event loop), so every slot keeps its single writer and the sums are the UDP path's bit for bit.
 * Results go to the job's board (see {@link ResultSender}); to workers over UDP in a job that has both
 * kinds.
 *
 * <p>Each job has a ring of its own, whose name goes once its ranks mapped it: a ring that shrank
 * anyway (truncated before that, or through a descriptor opened before that) stops that job's ring
 * alone; the port goes on reading the others.
 */
final class IpcPort implements RequestRing.Consumer {
    private static final Logger LOG = LoggerFactory.getLogger(IpcPort.class);
    /** Packets read from one ring per poll before the loop goes on to the next ring and then serves its socket. */
    private static final int PACKETS_PER_POLL = 16;

    /** One installed job's ring for this port, and what the port knows of it. */
    private static final class JobRing {
        final RequestRing ring;
        final int jobNumber;
        /** Set once the job's files lost their names: nothing can open the ring any more to shrink it. */
        final AtomicBoolean unlinked;
        /** Records of dead writers the ring skipped so far, as counted. */
        long unblocked;
        /** The ring's file shrank: the port reads it no more. */
        boolean broken;
        /** The last poll found nothing: the next one, after a pause, first checks that the ring's file is whole. */
        boolean idle = true;

        JobRing(RequestRing ring, int jobNumber, AtomicBoolean unlinked) {
            this.ring = ring;
            this.jobNumber = jobNumber;
            this.unlinked = unlinked;
        }
    }

    private final int portIndex;
    private final ControlPlane controlPlane;
    private final SwitchProgram program;
    private final ChannelResultSink sink;
    private final ChannelHandlerContext context;
    private final IpcPoller poller;
    /** The tables {@link #rings} was made from. */
    private SwitchTables seen;
    private JobRing[] rings = new JobRing[0];
    /** The ring being drained, or null. */
    private JobRing reading;
    private boolean boardFaultLogged;

    IpcPort(int portIndex, ControlPlane controlPlane, SwitchProgram program, ChannelResultSink sink,
            ChannelHandlerContext context, long spinNanos) {
        this.portIndex = portIndex;
        this.controlPlane = controlPlane;
        this.program = program;
        this.sink = sink;
        this.context = context;
        this.poller = new IpcPoller(context.executor(), this::poll, this::fault, new RingsAsleep(), spinNanos);
    }

    void start() {
        poller.start();
    }

    /** Reads what the jobs' rings hold; counts and reports the records of writers that died mid-write, which it skipped. */
    private int poll() {
        int read = 0;
        try {
            for (JobRing ring : currentRings()) {
                read += poll(ring);
            }
        } finally {
            sink.flush(); // the wake-ups and UDP results of the records drained, in one send
        }
        return read;
    }

    private int poll(JobRing job) {
        if (job.broken) {
            return 0;
        }
        // After a pause (a wake-up, the backstop, an idle spin), a look at the file's size before its pages: a ring
        // truncated while it was idle is found without touching it, so no SIGBUS (whose late error the JVM may raise
        // anywhere on this thread) comes of it. While records flow, the guards below are the only line. Once the name
        // is gone nobody can open the file to shrink it, and the look (a system call per idle ring and poll) stops.
        if (job.idle && !job.unlinked.get() && job.ring.shrank()) {
            ringBroken(job);
            return 0;
        }
        int read;
        reading = job;
        try {
            read = job.ring.drain(this, PACKETS_PER_POLL);
        } catch (InternalError e) {
            fault(e);
            return 0;
        } finally {
            reading = null;
        }
        job.idle = read == 0;
        long skipped = job.ring.unblocked() - job.unblocked;
        if (skipped > 0) {
            job.unblocked += skipped;
            for (long i = 0; i < skipped; i++) {
                program.counters().increment(SwitchCounter.IPC_RECORDS_UNBLOCKED);
            }
            LOG.warn("shared-memory port {}: skipped a record in job {}'s ring that a worker claimed and never wrote (it"
                    + " died mid-write?); {} so far", portIndex, job.jobNumber, job.unblocked);
        }
        return read;
    }

    /** The rings of the jobs installed now, made again when the tables changed (a job came or went). */
    private JobRing[] currentRings() {
        SwitchTables tables = controlPlane.tables();
        if (tables != seen) {
            Map<RequestRing, JobRing> known = new IdentityHashMap<>();
            for (JobRing ring : rings) {
                known.put(ring.ring, ring);
            }
            List<JobRing> now = new ArrayList<>();
            for (int j = 0; j < ProtocolConstants.MAX_JOBS; j++) {
                InstalledJob job = tables.job(j);
                RequestRing ring = job == null || job.ipcFiles() == null ? null : job.ipcFiles().ring(portIndex);
                if (ring != null) {
                    JobRing kept = known.get(ring);
                    now.add(kept != null ? kept : new JobRing(ring, j, job.ipcFiles().unlinked()));
                }
            }
            rings = now.toArray(JobRing[]::new);
            seen = tables;
        }
        return rings;
    }

    @Override
    public void packet(int sourceIpv4, int sourcePort, ByteBuffer packet) {
        sink.begin(context, null);
        try {
            program.processFromRing(sourceIpv4, sourcePort, portIndex, packet);
        } catch (InternalError e) {
            if (reading != null && reading.ring.shrank()) {
                throw e; // the ring itself: its drain stops reading it
            }
            boardFault();
        } finally {
            sink.end();
        }
    }

    /**
     * The JVM turned the SIGBUS of a mapped page that is gone into this error, raised after the access that caused it,
     * wherever this thread was then. A ring whose file shrank is read no more; a fault while a ring whose name is
     * already gone was drained is that ring's (only a descriptor opened before its name went can shrink it); any other
     * was a job's board.
     */
    private void fault(InternalError e) {
        boolean found = false;
        for (JobRing job : rings) {
            if (!job.broken && job.ring.shrank()) {
                ringBroken(job);
                found = true;
            }
        }
        if (!found && reading != null) {
            ringBroken(reading);
            found = true;
        }
        if (!found) {
            boardFault();
        }
    }

    /** A job's ring shrank: the port stops reading it, once, and says so; the other jobs go on. */
    private void ringBroken(JobRing job) {
        if (!job.broken) {
            job.broken = true;
            program.counters().increment(SwitchCounter.IPC_RINGS_BROKEN);
            LOG.error("shared-memory port {}: the request ring {} of job {} shrank under the switch (a process of the"
                    + " switch's user truncated it); the port reads it no more, and that job's workers on this host fail"
                    + " their operations (restart the job); other jobs go on", portIndex, job.ring.file(), job.jobNumber);
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

    /**
     * The port's sleep posted on every ring it reads; a ring installed while it sleeps starts with its flag up
     * ({@link IpcDirectory#createJobFiles}), so its first writer rings the port, which then learns of it.
     */
    private final class RingsAsleep implements SleepNotice {
        @Override
        public void sleep() {
            for (JobRing job : currentRings()) {
                if (!job.broken && (job.unlinked.get() || !job.ring.shrank())) {
                    job.ring.readerSleeping().sleep();
                }
            }
        }

        @Override
        public void awake() {
            for (JobRing job : rings) {
                if (!job.broken) {
                    job.ring.readerSleeping().awake();
                }
            }
        }
    }
}
