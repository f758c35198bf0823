package io.switchml.controller;

import java.util.Locale;
import java.util.concurrent.atomic.LongAdder;

/** How many jobs ended since the switch started, by why: the metrics' {@code switchml_jobs_ended_total}. */
final class JobEndings {
    /** Why a running job ended. */
    enum Reason {
        /** Every rank left. */
        LEFT,
        /** A rank died (its connection or its watch was lost); the job was aborted. */
        RANK_FAILED,
        /** A leaf's job whose spine went away. */
        SPINE_LOST,
        /** No rank was heard for the idle limit; the switch reclaimed it. */
        IDLE,
        /** The operator ended it (its token, or the switch's own user or root on its host). */
        OPERATOR;

        final String label = name().toLowerCase(Locale.ROOT);
    }

    private final LongAdder[] counts = new LongAdder[Reason.values().length];

    JobEndings() {
        for (int i = 0; i < counts.length; i++) {
            counts[i] = new LongAdder();
        }
    }

    void ended(Reason reason) {
        counts[reason.ordinal()].increment();
    }

    long count(Reason reason) {
        return counts[reason.ordinal()].sum();
    }
}
