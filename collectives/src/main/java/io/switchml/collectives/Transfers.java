package io.switchml.collectives;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Whole messages sent and received on several links at once: the small messages of barrier,
 * broadcast, the handshake's siblings and a server's error reports. Entries on the same link run in
 * the order they were added; entries on different links run side by side.
 */
final class Transfers implements Exchange {
    private final List<Entry> entries = new ArrayList<>();
    private final List<Link> busy = new ArrayList<>();

    private record Entry(Link link, ByteBuffer buffer, boolean send, String what) {
    }

    /** Sends the buffer's remaining bytes; {@code what} names the message, e.g. "barrier #4". */
    Transfers send(Link link, ByteBuffer buffer, String what) {
        entries.add(new Entry(link, buffer, true, what));
        return this;
    }

    /** Fills the buffer to its limit. */
    Transfers receive(Link link, ByteBuffer buffer, String what) {
        entries.add(new Entry(link, buffer, false, what));
        return this;
    }

    @Override
    public boolean advance() throws LinkFailure {
        busy.clear();
        boolean done = true;
        for (Entry e : entries) {
            if (!e.buffer.hasRemaining() || busy.contains(e.link)) {
                done &= !e.buffer.hasRemaining();
                continue;
            }
            if (e.send) {
                while (e.buffer.hasRemaining() && e.link.write(e.buffer) > 0) {
                    // The socket took some; offer the rest.
                }
            } else {
                while (e.buffer.hasRemaining() && e.link.read(e.buffer) > 0) {
                    // Something arrived; see if more did.
                }
            }
            if (e.buffer.hasRemaining()) {
                done = false;
                busy.add(e.link);
                if (e.send) {
                    e.link.wantWrite();
                } else {
                    e.link.wantRead();
                }
            }
        }
        return done;
    }

    @Override
    public String waitingFor() {
        StringBuilder s = new StringBuilder();
        for (Entry e : pending()) {
            s.append(s.length() == 0 ? "" : "; ").append(e.send ? e.link.peer() + " to take " : e.link.peer() + " to send ")
                    .append(e.what).append(" (").append(e.buffer.position()).append(" of ").append(e.buffer.limit())
                    .append(" bytes done)");
        }
        return s.length() == 0 ? "nothing" : s.toString();
    }

    @Override
    public List<Integer> awaitedRanks() {
        List<Integer> ranks = new ArrayList<>();
        for (Entry e : pending()) {
            for (int r : e.link.peerRanks()) {
                if (!ranks.contains(r)) {
                    ranks.add(r);
                }
            }
        }
        ranks.sort(null);
        return ranks;
    }

    /** The first unfinished entry of each link: what each link is stuck on. */
    private List<Entry> pending() {
        List<Entry> first = new ArrayList<>();
        List<Link> seen = new ArrayList<>();
        for (Entry e : entries) {
            if (e.buffer.hasRemaining() && !seen.contains(e.link)) {
                seen.add(e.link);
                first.add(e);
            }
        }
        return first;
    }
}
