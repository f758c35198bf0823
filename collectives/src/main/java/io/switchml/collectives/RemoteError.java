package io.switchml.collectives;

import io.switchml.api.MismatchedOperationException;
import io.switchml.api.SwitchMLException;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A parameter server's report of why an all-reduce failed, sent to every worker in an ERROR frame so
 * that each one fails with the server's diagnosis (which ranks it never heard from) rather than
 * with a bare timeout of its own.
 *
 * @param code  {@link #TIMEOUT}, {@link #PEER_FAILED}, {@link #MISMATCH} or {@link #OTHER}
 * @param ranks the worker ranks at fault
 */
record RemoteError(int code, List<Integer> ranks, String message) {
    static final int OTHER = 0;
    static final int TIMEOUT = 1;
    static final int PEER_FAILED = 2;
    static final int MISMATCH = 3;

    /** The ERROR frame: header, then code, rank count, ranks, UTF-8 message. */
    ByteBuffer frame(long sequence) {
        byte[] text = message.getBytes(StandardCharsets.UTF_8);
        int payload = 8 + 4 * ranks.size() + text.length;
        ByteBuffer b = ByteBuffer.allocate(MessageHeader.BYTES + payload);
        new MessageHeader(MessageHeader.ERROR, 0, sequence, payload).put(b);
        b.putInt(code).putInt(ranks.size());
        for (int r : ranks) {
            b.putInt(r);
        }
        return b.put(text).flip();
    }

    /** Decodes an ERROR frame's payload; null when it is malformed. */
    static RemoteError decode(ByteBuffer payload) {
        try {
            int code = payload.getInt(0);
            int count = payload.getInt(4);
            List<Integer> ranks = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                ranks.add(payload.getInt(8 + 4 * i));
            }
            byte[] text = new byte[payload.limit() - 8 - 4 * count];
            payload.get(8 + 4 * count, text);
            return new RemoteError(code, ranks, new String(text, StandardCharsets.UTF_8));
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** The exception a worker throws for it; {@code prefix} says who reports what. */
    SwitchMLException toException(String prefix) {
        String text = prefix + message;
        switch (code) {
            case TIMEOUT:
                return new CollectiveTimeoutException(text, ranks);
            case PEER_FAILED:
                return new PeerFailedException(text, ranks, null);
            case MISMATCH:
                return new MismatchedOperationException(text);
            default:
                return new SwitchMLException(text);
        }
    }
}
