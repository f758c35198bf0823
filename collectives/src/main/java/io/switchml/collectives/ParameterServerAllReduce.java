package io.switchml.collectives;

import io.switchml.api.ReduceOp;
import io.switchml.api.SwitchMLException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;

/**
 * The worker side of a parameter server all-reduce, as BytePS: the tensor is cut into one shard per
 * server ({@link Partition}); the worker pushes shard s to server s and pulls back the sum, from all
 * servers at once. A server sums a shard in rank order and returns it in segments as soon as every
 * worker's push of that segment is in, so pushing and pulling overlap.
 *
 * <p>Servers run either inside the workers' processes (server s in rank s, "one per worker host") or
 * as separate {@link ParameterServer} processes, as {@link CollectiveConfig#serversInWorkers()} says.
 *
 * <p>Numbers: {@code s = x[0] + x[1] + ... + x[n-1]} left to right in float32 (int32 wrapping), then
 * MEAN divides once, {@code s / (float) n} (int32: Java's {@code s / n}), on the server; every worker
 * receives the same bytes. {@link ParameterServerReference} computes the same locally.
 *
 * <p>When a server gives up on an all-reduce (a worker missing or gone, operations that differ), it
 * tells every worker why, naming the ranks; the workers wait {@link #SERVER_VERDICT_GRACE} past
 * their own operation timeout for that report.
 */
public final class ParameterServerAllReduce extends TcpCollective {
    /** How much longer than the operation timeout a worker waits, so the server's diagnosis reaches it first. */
    public static final Duration SERVER_VERDICT_GRACE = Duration.ofSeconds(1);

    private final ParameterServer ownServer;
    /** What the server in this process sends to the other ranks (its own thread counts it). */
    private final LongAdder serverSent;
    private final Pass pass;

    private ParameterServerAllReduce(CollectiveConfig config, Poller poller, PeerConnector.Links links, ParameterServer ownServer,
                                     LongAdder serverSent) {
        super(config, poller, links, new LongAdder());
        this.ownServer = ownServer;
        this.serverSent = serverSent;
        this.pass = new Pass(links.servers());
        for (int s = 0; s < links.servers().length; s++) {
            if (ownServer == null || s != config.rank()) { // the push to the server in this process crosses no link
                links.servers()[s].countSentInto(sent);
            }
        }
    }

    /**
     * Starts this rank's server (when servers run in the workers and this rank hosts one), connects
     * to rank 0 and to every server, and returns once all are connected.
     *
     * @param workerListener this rank's bound endpoint, or null to bind {@code endpoints[rank]}; closed once connected
     * @param serverListener the bound endpoint of the server this rank hosts, or null to bind {@code servers[rank]}
     */
    public static ParameterServerAllReduce open(CollectiveConfig config, Listener workerListener, Listener serverListener) {
        if (config.algorithm() != Algorithm.PARAMETER_SERVER) {
            throw new IllegalArgumentException("a parameter server all-reduce needs algorithm ps, not " + config.algorithm());
        }
        boolean hostsServer = config.serversInWorkers() && config.rank() < config.serverCount();
        if (serverListener != null && !hostsServer) {
            serverListener.close();
            throw new IllegalArgumentException("rank " + config.rank() + " hosts no server, but a server listener was given");
        }
        ParameterServer ownServer = null;
        Poller poller = null;
        LongAdder serverSent = new LongAdder();
        Listener bound = workerListener;
        try {
            if (bound == null) {
                bound = Listener.bind(config.endpoints().get(config.rank()));
            }
            if (hostsServer) {
                Listener ownListener = serverListener != null ? serverListener
                        : Listener.bind(config.servers().get(config.rank()));
                // Its results to the other ranks leave this process: they count as this worker's traffic.
                ownServer = ParameterServer.start(config.parameterServer(config.rank()), ownListener, serverSent, config.rank());
            }
            poller = new Poller();
            PeerConnector rendezvous = workerConnections(poller, config, bound, false);
            for (int s = 0; s < config.serverCount(); s++) {
                rendezvous.dialServer(s, config.servers().get(s));
            }
            PeerConnector.Links links = rendezvous.connect(Deadline.after(config.connectTimeout()));
            return new ParameterServerAllReduce(config, poller, links, ownServer, serverSent);
        } catch (RuntimeException e) {
            if (ownServer != null) {
                ownServer.close();
            } else if (serverListener != null) {
                serverListener.close();
            }
            if (poller != null) {
                poller.close();
            }
            throw e;
        } finally {
            if (bound != null) {
                bound.close();
            }
        }
    }

    @Override
    protected void reduce(Operand operand, ReduceOp op, long sequence, String context) {
        pass.start(operand, op, sequence, context);
        poller.complete(pass, Deadline.after(config.operationTimeout()).extendedBy(SERVER_VERDICT_GRACE), context);
    }

    @Override
    protected long otherBytesSent() {
        return serverSent.sum();
    }

    @Override
    public void close() {
        super.close();
        if (ownServer != null) {
            ownServer.close();
        }
    }

    /** One all-reduce's pushes to and pulls from every server; reused from one all-reduce to the next. */
    private final class Pass implements Exchange {
        private final Link[] servers;
        private final ByteBuffer[] pushHeaders;
        private final ByteBuffer[] frameHeaders;
        private final ByteBuffer[] pushViews;
        private final ByteBuffer[] pullViews;
        private final int[] pushedBytes;
        private final int[] pulledBytes;
        /** Bytes left of the result frame being read, or -1 while reading a frame header. */
        private final int[] frameLeft;
        private final boolean[] anyFrame;
        private final boolean[] writeBlocked;
        private ByteBuffer buffer;
        private Partition shards;
        private long sequence;
        private String context;
        /** The payload of an error report being read, and from which server. */
        private ByteBuffer errorPayload;
        private int errorServer;

        Pass(Link[] servers) {
            int s = servers.length;
            this.servers = servers;
            pushHeaders = new ByteBuffer[s];
            frameHeaders = new ByteBuffer[s];
            pushViews = new ByteBuffer[s];
            pullViews = new ByteBuffer[s];
            pushedBytes = new int[s];
            pulledBytes = new int[s];
            frameLeft = new int[s];
            anyFrame = new boolean[s];
            writeBlocked = new boolean[s];
            for (int i = 0; i < s; i++) {
                pushHeaders[i] = MessageHeader.allocate();
                frameHeaders[i] = MessageHeader.allocate();
            }
        }

        void start(Operand operand, ReduceOp op, long sequence, String context) {
            this.context = context;
            if (buffer != work.current()) { // it grew: views of the new one
                buffer = work.current();
                for (int s = 0; s < servers.length; s++) {
                    pushViews[s] = buffer.duplicate();
                    pullViews[s] = buffer.duplicate();
                }
            }
            this.sequence = sequence;
            shards = Partition.of(operand.length(), servers.length);
            MessageHeader push = MessageHeader.allReduce(MessageHeader.PUSH, sequence, operand.type(), op, operand.length());
            for (int s = 0; s < servers.length; s++) {
                push.writeTo(pushHeaders[s]);
                frameHeaders[s].clear();
                pushedBytes[s] = 0;
                pulledBytes[s] = 0;
                frameLeft[s] = -1;
                anyFrame[s] = false;
            }
            errorPayload = null;
        }

        private int shardBytes(int s) {
            return shards.size(s) * ElementType.BYTES;
        }

        private int shardBase(int s) {
            return shards.start(s) * ElementType.BYTES;
        }

        private boolean pushed(int s) {
            return !pushHeaders[s].hasRemaining() && pushedBytes[s] == shardBytes(s);
        }

        private boolean pulled(int s) {
            return anyFrame[s] && frameLeft[s] < 0 && pulledBytes[s] == shardBytes(s);
        }

        @Override
        public boolean advance() throws IOException {
            boolean progress;
            do {
                progress = false;
                for (int s = 0; s < servers.length; s++) {
                    progress |= pushOrExplain(s) | pull(s);
                }
            } while (progress);
            boolean done = true;
            for (int s = 0; s < servers.length; s++) {
                if (writeBlocked[s]) {
                    servers[s].wantWrite();
                }
                if (!pulled(s)) {
                    servers[s].wantRead();
                }
                done &= pushed(s) && pulled(s);
            }
            return done;
        }

        /**
         * Pushes; if the connection broke, first reads what the server sent last: a server that gives
         * up reports why before it closes, and its report says more than a broken pipe.
         */
        private boolean pushOrExplain(int s) throws LinkFailure {
            try {
                return push(s);
            } catch (LinkFailure e) {
                try {
                    while (pull(s)) {
                        // Throws the server's report once it is read.
                    }
                } catch (LinkFailure ignored) {
                    // No report: the broken connection is all there is to say.
                }
                throw e;
            }
        }

        private boolean push(int s) throws LinkFailure {
            writeBlocked[s] = false;
            if (pushed(s)) {
                return false;
            }
            Link link = servers[s];
            boolean progress = false;
            if (pushHeaders[s].hasRemaining()) {
                progress = link.write(pushHeaders[s]) > 0;
                if (pushHeaders[s].hasRemaining()) {
                    writeBlocked[s] = true;
                    return progress;
                }
            }
            int base = shardBase(s);
            pushViews[s].limit(base + shardBytes(s)).position(base + pushedBytes[s]);
            int sent = link.write(pushViews[s]);
            pushedBytes[s] += sent;
            writeBlocked[s] = pushedBytes[s] < shardBytes(s);
            return progress | sent > 0;
        }

        /**
         * Reads result frames into the shard's place in the work buffer. The server sends a segment
         * only after every worker pushed it, so our own bytes of it have left before they are overwritten.
         */
        private boolean pull(int s) throws LinkFailure {
            Link link = servers[s];
            boolean progress = false;
            while (!pulled(s)) {
                if (errorPayload != null && errorServer == s) {
                    progress |= link.read(errorPayload) > 0;
                    if (errorPayload.hasRemaining()) {
                        return progress;
                    }
                    throw reported(s);
                }
                if (frameLeft[s] < 0) {
                    progress |= link.read(frameHeaders[s]) > 0;
                    if (frameHeaders[s].hasRemaining()) {
                        return progress;
                    }
                    startFrame(s, MessageHeader.readFrom(frameHeaders[s]));
                    frameHeaders[s].clear();
                    progress = true;
                    continue;
                }
                int at = shardBase(s) + pulledBytes[s];
                pullViews[s].limit(at + frameLeft[s]).position(at);
                int got = link.read(pullViews[s]);
                if (got == 0) {
                    return progress;
                }
                pulledBytes[s] += got;
                frameLeft[s] -= got;
                if (frameLeft[s] == 0) {
                    frameLeft[s] = -1;
                }
                progress = true;
            }
            return progress;
        }

        private void startFrame(int s, MessageHeader frame) {
            if (frame.kind() == MessageHeader.ERROR && frame.length() >= 8 && frame.length() <= 1 << 20) {
                errorPayload = ByteBuffer.allocate(frame.length());
                errorServer = s;
                return;
            }
            boolean fits = frame.kind() == MessageHeader.RESULT && frame.sequence() == sequence && frame.length() >= 0
                    && frame.length() % ElementType.BYTES == 0 && frame.length() <= shardBytes(s) - pulledBytes[s];
            if (!fits) {
                throw new SwitchMLException(servers[s].peer() + " sent " + frame.describe() + " of " + frame.length()
                        + " bytes where this worker expected the result of all-reduce #" + sequence + " ("
                        + (shardBytes(s) - pulledBytes[s]) + " bytes left); is it a server of the same job and version?");
            }
            frameLeft[s] = frame.length() == 0 ? -1 : frame.length(); // an empty shard's frame only says "done"
            anyFrame[s] = true;
        }

        private SwitchMLException reported(int s) {
            RemoteError error = RemoteError.decode(errorPayload.flip());
            if (error == null) {
                return new SwitchMLException(context + ": " + servers[s].peer() + " reported an error that could not be decoded");
            }
            return error.toException(context + ": " + servers[s].peer() + " gave up: ");
        }

        @Override
        public String waitingFor() {
            StringBuilder s = new StringBuilder();
            for (int i = 0; i < servers.length; i++) {
                if (!pushed(i)) {
                    s.append(s.length() == 0 ? "" : "; ").append(servers[i].peer()).append(" to take shard ").append(i)
                            .append(" (").append(pushedBytes[i]).append(" of ").append(shardBytes(i)).append(" bytes sent)");
                } else if (!pulled(i)) {
                    s.append(s.length() == 0 ? "" : "; ").append(servers[i].peer()).append(" to return the sum of shard ")
                            .append(i).append(" (").append(pulledBytes[i]).append(" of ").append(shardBytes(i))
                            .append(" bytes received; the server reported no error)");
                }
            }
            return s.toString();
        }

        @Override
        public List<Integer> awaitedRanks() {
            return List.of(); // servers are not ranks; a server's own report names the ranks it waits for
        }
    }
}
