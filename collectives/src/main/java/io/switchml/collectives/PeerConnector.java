package io.switchml.collectives;

import io.switchml.api.SwitchMLException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.TreeSet;

/**
 * Sets up a worker's connections under one deadline: dials the peers it is told to dial (retrying
 * while they are not listening yet), accepts the ranks it expects on its listener, and checks every
 * peer's {@link Hello}. Between two workers the higher rank dials the lower one, so each pair has
 * exactly one connection. A timeout names every peer still missing and why.
 */
final class PeerConnector {
    private static final Logger LOG = LoggerFactory.getLogger(PeerConnector.class);
    private static final long FIRST_RETRY_MILLIS = 10;
    private static final long MAX_RETRY_MILLIS = 200;

    private final Poller poller;
    private final Hello self;
    private final String selfName;
    private final Listener listener;
    private final List<Dial> dials = new ArrayList<>();
    private final TreeSet<Integer> expected = new TreeSet<>();
    /** Where the expected ranks listen (for naming them in messages), by rank. */
    private final InetSocketAddress[] expectedEndpoints;
    private final List<Handshake> incoming = new ArrayList<>();
    private final Link[] workers;
    private final Link[] servers;

    /** The links once set up: {@code workers[rank]} and {@code servers[index]}, null where none. */
    record Links(Link[] workers, Link[] servers) {
        void closeAll() {
            for (Link[] links : List.of(workers, servers)) {
                for (Link l : links) {
                    if (l != null) {
                        l.close();
                    }
                }
            }
        }
    }

    /** A peer to dial, and how far the dialing has got. */
    private static final class Dial {
        final boolean server;
        final int id;
        final InetSocketAddress address;
        Handshake handshake;
        long retryAtNanos;
        long backoffMillis = FIRST_RETRY_MILLIS;
        String lastError = "no answer yet";
        boolean done;

        Dial(boolean server, int id, InetSocketAddress address) {
            this.server = server;
            this.id = id;
            this.address = address;
        }

        String name() {
            return (server ? "server " : "rank ") + id + " (" + address + ")";
        }
    }

    /**
     * @param self     this worker's hello
     * @param listener where the expected ranks connect; may be null when none are expected
     */
    PeerConnector(Poller poller, Hello self, Listener listener) {
        this.poller = poller;
        this.self = self;
        this.selfName = "rank " + self.id();
        this.listener = listener;
        this.workers = new Link[self.workers()];
        this.expectedEndpoints = new InetSocketAddress[self.workers()];
        this.servers = new Link[self.servers()];
    }

    PeerConnector dialWorker(int rank, InetSocketAddress address) {
        dials.add(new Dial(false, rank, address));
        return this;
    }

    PeerConnector dialServer(int index, InetSocketAddress address) {
        dials.add(new Dial(true, index, address));
        return this;
    }

    /** @param endpoint where that rank listens, to name it in messages (it dials from another port) */
    PeerConnector acceptWorker(int rank, InetSocketAddress endpoint) {
        expected.add(rank);
        expectedEndpoints[rank] = endpoint;
        return this;
    }

    /** Connects everything or throws; on failure every channel opened here is closed. */
    Links connect(Deadline deadline) {
        Links links = new Links(workers, servers);
        SelectionKey acceptKey = null;
        try {
            if (!expected.isEmpty()) {
                acceptKey = poller.register(listener.channel(), SelectionKey.OP_ACCEPT, null);
            }
            while (true) {
                long now = System.nanoTime();
                long nextRetry = Long.MAX_VALUE;
                for (Dial d : dials) {
                    if (!d.done) {
                        advance(d, now);
                        if (!d.done && d.handshake == null) {
                            nextRetry = Math.min(nextRetry, d.retryAtNanos);
                        }
                    }
                }
                acceptNew();
                advanceIncoming();
                if (finished()) {
                    return links;
                }
                long millis = deadline.remainingMillis();
                if (millis == 0) {
                    throw timeout(deadline);
                }
                if (nextRetry != Long.MAX_VALUE) {
                    millis = Math.min(millis, Math.max(1, (nextRetry - System.nanoTime()) / 1_000_000));
                }
                poller.await(millis);
            }
        } catch (Poller.AbortedException e) {
            closeAll(links);
            throw new SwitchMLException(selfName + ": closed while setting up connections");
        } catch (IOException e) {
            closeAll(links);
            throw new SwitchMLException(selfName + ": cannot set up connections: " + e, e);
        } catch (RuntimeException e) {
            closeAll(links);
            throw e;
        } finally {
            if (acceptKey != null) {
                acceptKey.cancel();
            }
        }
    }

    private void advance(Dial d, long now) throws IOException {
        if (d.handshake == null) {
            if (now - d.retryAtNanos < 0) {
                return;
            }
            SocketChannel channel = SocketChannel.open();
            try {
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                SelectionKey key = poller.register(channel, SelectionKey.OP_CONNECT, null);
                d.handshake = new Handshake(channel, key, self);
                channel.connect(d.address);
            } catch (IOException e) {
                failedAttempt(d, e, now);
                return;
            }
        }
        try {
            if (!d.handshake.advance()) {
                return;
            }
        } catch (IOException e) {
            failedAttempt(d, e, now);
            return;
        }
        Hello peer = d.handshake.peerHello();
        Hello wanted = d.server ? new Hello(Hello.SERVER, d.id, self.workers(), self.servers())
                : new Hello(Hello.WORKER, d.id, self.workers(), self.servers());
        if (!wanted.equals(peer)) {
            throw new SwitchMLException(selfName + ": the peer at " + d.address + " is "
                    + (peer == null ? "not a switchml collectives peer (or a different version)" : peer.describe())
                    + ", but this worker's configuration says it is " + wanted.describe() + "; check the endpoint lists");
        }
        Link link = new Link(d.handshake.channel(), d.name(), d.server ? -1 : d.id);
        poller.add(link);
        (d.server ? servers : workers)[d.id] = link;
        d.done = true;
    }

    private void failedAttempt(Dial d, IOException e, long now) {
        if (d.handshake != null) {
            d.handshake.close();
            d.handshake = null;
        }
        d.lastError = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        d.retryAtNanos = now + d.backoffMillis * 1_000_000;
        d.backoffMillis = Math.min(MAX_RETRY_MILLIS, d.backoffMillis * 2);
    }

    private void acceptNew() throws IOException {
        if (expected.isEmpty()) {
            return;
        }
        SocketChannel channel;
        while ((channel = listener.channel().accept()) != null) {
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            SelectionKey key = poller.register(channel, SelectionKey.OP_READ, null);
            incoming.add(new Handshake(channel, key, self));
        }
    }

    private void advanceIncoming() throws IOException {
        for (Iterator<Handshake> it = incoming.iterator(); it.hasNext(); ) {
            Handshake h = it.next();
            boolean done;
            try {
                done = h.advance();
            } catch (IOException e) {
                LOG.debug("{}: dropped an incoming connection during its handshake: {}", selfName, e.toString());
                h.close();
                it.remove();
                continue;
            }
            if (!done) {
                continue;
            }
            it.remove();
            Hello peer = h.peerHello();
            if (peer == null) {
                LOG.warn("{}: dropped a connection from {} that does not speak this protocol", selfName,
                        h.channel().socket().getRemoteSocketAddress());
                h.close();
                continue;
            }
            boolean sameJob = peer.role() == Hello.WORKER && peer.workers() == self.workers() && peer.servers() == self.servers();
            if (!sameJob || !expected.contains(peer.id())) {
                h.close();
                throw new SwitchMLException(selfName + ": " + peer.describe() + " connected from "
                        + h.channel().socket().getRemoteSocketAddress() + ", but this worker expects "
                        + (expected.isEmpty() ? "no more connections" : "only ranks " + expected) + " of a job with "
                        + self.workers() + " workers and " + self.servers() + " servers; check the endpoint lists"
                        + " (or is another job using the same ports?)");
            }
            expected.remove(peer.id());
            Link link = new Link(h.channel(), "rank " + peer.id() + " (" + expectedEndpoints[peer.id()] + ")", peer.id());
            poller.add(link);
            workers[peer.id()] = link;
        }
    }

    private boolean finished() {
        if (!expected.isEmpty()) {
            return false;
        }
        for (Dial d : dials) {
            if (!d.done) {
                return false;
            }
        }
        return true;
    }

    private CollectiveTimeoutException timeout(Deadline deadline) {
        StringBuilder s = new StringBuilder(selfName + ": timed out after " + deadline.timeout().toMillis()
                + " ms setting up connections:");
        TreeSet<Integer> missing = new TreeSet<>(expected);
        String sep = " ";
        for (Dial d : dials) {
            if (!d.done) {
                boolean silent = d.handshake != null && d.handshake.channel().isConnected();
                s.append(sep).append("could not connect to ").append(d.name()).append(silent
                        ? " (the connection was accepted, but the peer never answered the handshake)"
                        : " (last error: " + d.lastError + ")");
                sep = "; ";
                if (!d.server) {
                    missing.add(d.id);
                }
            }
        }
        for (int r : expected) {
            s.append(sep).append("rank ").append(r).append(" never connected to this worker's endpoint ")
                    .append(listener.address());
            sep = "; ";
        }
        return new CollectiveTimeoutException(s.toString(), new ArrayList<>(missing));
    }

    private void closeAll(Links links) {
        for (Dial d : dials) {
            if (d.handshake != null && !d.done) {
                d.handshake.close();
            }
        }
        for (Handshake h : incoming) {
            h.close();
        }
        links.closeAll();
    }
}
