package io.switchml.collectives;

import io.switchml.api.MismatchedOperationException;
import io.switchml.api.SwitchMLException;

import java.nio.ByteBuffer;
import java.util.List;

/**
 * Barrier and broadcast among the workers, through rank 0 (every rank has a link to it). Both go the
 * same way: every rank tells rank 0 what it is doing (the root adds its value); rank 0 checks that
 * all agree, then answers each (a release, the value, or an acknowledgement to the root). When they
 * disagree rank 0 tells every rank so, and all fail with a {@link MismatchedOperationException}
 * instead of waiting for a message that will never come. Two hops; rare enough next to the
 * all-reduces that the simplicity wins.
 */
final class ControlOperations {
    private static final int MAX_BROADCAST_BYTES = 1 << 30;
    private static final int MAX_REPORT_BYTES = 1 << 20;

    private final int rank;
    private final int workers;
    private final Link[] peers;
    private final Poller poller;
    private final String self;

    /** @param peers links by rank; rank 0 needs all, the others need peers[0] */
    ControlOperations(int rank, int workers, Link[] peers, Poller poller, String self) {
        this.rank = rank;
        this.workers = workers;
        this.peers = peers;
        this.poller = poller;
        this.self = self;
    }

    void barrier(long sequence, Deadline deadline) {
        MessageHeader arrive = new MessageHeader(MessageHeader.BARRIER, 0, sequence, 0);
        MessageHeader release = new MessageHeader(MessageHeader.RELEASE, 0, sequence, 0);
        String context = self + ": " + arrive.describe();
        if (workers == 1) {
            return;
        }
        if (rank != 0) {
            poller.complete(new Transfers().send(peers[0], encode(arrive, null), arrive.describe()), deadline, context);
            receiveReply(release, deadline, context);
            return;
        }
        gather(arrive, deadline, context);
        Transfers releases = new Transfers();
        for (int r = 1; r < workers; r++) {
            releases.send(peers[r], encode(release, null), release.describe());
        }
        poller.complete(releases, deadline, context);
    }

    /** Every rank calls it; returns the root's value (a copy on the root too). */
    byte[] broadcast(byte[] value, int root, long sequence, Deadline deadline) {
        byte[] mine = rank == root ? value.clone() : new byte[0];
        MessageHeader announce = new MessageHeader(MessageHeader.BROADCAST, root, sequence, mine.length);
        String context = self + ": " + announce.describe();
        if (workers == 1) {
            return mine;
        }
        if (rank != 0) {
            poller.complete(new Transfers().send(peers[0], encode(announce, mine), announce.describe()), deadline, context);
            if (rank == root) {
                receiveReply(new MessageHeader(MessageHeader.RELEASE, 0, sequence, 0), deadline, context);
                return mine;
            }
            MessageHeader header = receiveReply(announce, deadline, context);
            return receivePayload(peers[0], header, deadline, context);
        }
        MessageHeader[] announced = gather(announce, deadline, context);
        byte[] result = root == 0 ? mine : receivePayload(peers[root], announced[root], deadline, context);
        ByteBuffer forward = encode(new MessageHeader(MessageHeader.BROADCAST, root, sequence, result.length), result);
        Transfers replies = new Transfers();
        for (int r = 1; r < workers; r++) {
            replies.send(peers[r], r == root ? encode(new MessageHeader(MessageHeader.RELEASE, 0, sequence, 0), null)
                    : forward.duplicate(), announce.describe());
        }
        poller.complete(replies, deadline, context);
        return result;
    }

    /** Rank 0: every other rank's header; if one disagrees, tells them all and fails. */
    private MessageHeader[] gather(MessageHeader mine, Deadline deadline, String context) {
        ByteBuffer[] in = new ByteBuffer[workers];
        Transfers arrivals = new Transfers();
        for (int r = 1; r < workers; r++) {
            in[r] = MessageHeader.allocate();
            arrivals.receive(peers[r], in[r], mine.describe());
        }
        poller.complete(arrivals, deadline, context);
        MessageHeader[] headers = new MessageHeader[workers];
        for (int r = 1; r < workers; r++) {
            headers[r] = MessageHeader.readFrom(in[r]);
            try {
                MessageHeader.expectSame(mine, headers[r], mine.kind() != MessageHeader.BROADCAST, self, peers[r].peer());
            } catch (MismatchedOperationException e) {
                report(new RemoteError(RemoteError.MISMATCH, List.of(r), e.getMessage()), mine.sequence(), deadline, context);
                throw e;
            }
        }
        return headers;
    }

    /** Rank 0: sends the error to every other rank, as far as they can be reached. */
    private void report(RemoteError error, long sequence, Deadline deadline, String context) {
        Transfers reports = new Transfers();
        ByteBuffer frame = error.frame(sequence);
        for (int r = 1; r < workers; r++) {
            reports.send(peers[r], frame.duplicate(), "the report that the ranks disagree");
        }
        try {
            poller.complete(reports, deadline, context);
        } catch (SwitchMLException ignored) {
            // Best effort: closing the links after the failure tells the others anyway.
        }
    }

    /** Not rank 0: rank 0's answer, or its report of why there is none. */
    private MessageHeader receiveReply(MessageHeader expected, Deadline deadline, String context) {
        ByteBuffer in = MessageHeader.allocate();
        poller.complete(new Transfers().receive(peers[0], in, expected.describe()), deadline, context);
        MessageHeader reply = MessageHeader.readFrom(in);
        if (reply.kind() == MessageHeader.ERROR && reply.length() > 0 && reply.length() <= MAX_REPORT_BYTES) {
            ByteBuffer payload = ByteBuffer.allocate(reply.length());
            poller.complete(new Transfers().receive(peers[0], payload, "rank 0's error report"), deadline, context);
            RemoteError error = RemoteError.decode(payload.flip());
            if (error != null) {
                throw error.toException(context + ": rank 0 reports: ");
            }
        }
        MessageHeader.expectSame(expected, reply, false, self, peers[0].peer());
        return reply;
    }

    private byte[] receivePayload(Link from, MessageHeader header, Deadline deadline, String context) {
        if (header.length() < 0 || header.length() > MAX_BROADCAST_BYTES) {
            throw new SwitchMLException(context + ": " + from.peer() + " announced a broadcast of " + header.length() + " bytes");
        }
        ByteBuffer payload = ByteBuffer.allocate(header.length());
        poller.complete(new Transfers().receive(from, payload, header.describe() + "'s value"), deadline, context);
        return payload.array();
    }

    private static ByteBuffer encode(MessageHeader header, byte[] value) {
        ByteBuffer b = ByteBuffer.allocate(MessageHeader.BYTES + (value == null ? 0 : value.length));
        header.put(b);
        if (value != null) {
            b.put(value);
        }
        return b.flip();
    }
}
