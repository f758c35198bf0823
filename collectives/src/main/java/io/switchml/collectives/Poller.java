package io.switchml.collectives;

import io.switchml.api.SwitchMLException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.List;

/**
 * The selector one thread waits on for all its links, with deadlines. {@link #complete} drives an
 * {@link Exchange} to its end; a timeout, a broken link or {@link #abort} ends it with an error that
 * says what the thread was doing and what it was waiting for.
 */
final class Poller implements AutoCloseable {
    private final Selector selector;
    private final List<Link> links = new ArrayList<>();
    private volatile boolean aborted;

    Poller() {
        try {
            selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a selector", e);
        }
    }

    /** Registers a connected link; its channel is switched to non-blocking mode. */
    void add(Link link) throws IOException {
        link.channel().configureBlocking(false);
        link.attach(link.channel().register(selector, 0, link));
        links.add(link);
    }

    /** Registers a channel that is not a link yet (a listener, a connection being set up). */
    SelectionKey register(SelectableChannel channel, int ops, Object attachment) throws IOException {
        channel.configureBlocking(false);
        return channel.register(selector, ops, attachment);
    }

    /** Forgets a link (before closing it), so later waits no longer look at it. */
    void remove(Link link) {
        links.remove(link);
        SelectionKey key = link.channel().keyFor(selector);
        if (key != null) {
            key.cancel();
        }
    }

    /**
     * Applies every link's wanted operations, then sleeps until a channel is ready, the deadline
     * passes or {@link #abort} is called. Returns false when the deadline has passed.
     */
    boolean await(Deadline deadline) throws IOException {
        long millis = deadline.remainingMillis();
        if (millis == 0) {
            return false;
        }
        await(millis);
        return true;
    }

    /** Like {@link #await(Deadline)} but for at most {@code millis} (0: until something is ready). */
    void await(long millis) throws IOException {
        checkAborted();
        for (Link link : links) {
            link.applyInterest();
        }
        try {
            selector.select(millis);
        } catch (ClosedSelectorException e) {
            throw new AbortedException();
        }
        selector.selectedKeys().clear();
        checkAborted();
    }

    /**
     * Runs the exchange to its end. Errors start with {@code context} (who is doing what) and end
     * with what was being waited for.
     */
    void complete(Exchange exchange, Deadline deadline, String context) {
        try {
            while (!exchange.advance()) {
                if (deadline.expired() || !await(deadline)) {
                    throw new CollectiveTimeoutException(context + ": timed out after " + deadline.timeout().toMillis()
                            + " ms waiting for " + exchange.waitingFor(), exchange.awaitedRanks());
                }
            }
        } catch (LinkFailure e) {
            throw new PeerFailedException(context + ": " + e.getMessage() + " (it died, closed its instance, or gave up"
                    + " after an error of its own); this worker was waiting for " + exchange.waitingFor(), e.peerRanks(), e);
        } catch (AbortedException e) {
            throw new SwitchMLException(context + ": the instance was closed while the operation was running");
        } catch (IOException e) {
            throw new SwitchMLException(context + ": I/O error while waiting for " + exchange.waitingFor() + ": " + e, e);
        }
    }

    /** Makes the owning thread's current and later waits fail at once; callable from any thread. */
    void abort() {
        aborted = true;
        selector.wakeup();
    }

    boolean aborted() {
        return aborted;
    }

    private void checkAborted() {
        if (aborted) {
            throw new AbortedException();
        }
    }

    @Override
    public void close() {
        try {
            selector.close();
        } catch (IOException ignored) {
            // The channels are closed by their owners.
        }
    }

    /** Thrown inside the owning thread when {@link #abort} was called. */
    static final class AbortedException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        AbortedException() {
            super("aborted", null, false, false);
        }
    }
}
