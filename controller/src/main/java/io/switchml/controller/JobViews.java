package io.switchml.controller;

import io.switchml.controller.proto.JobDetailResponse;
import io.switchml.controller.proto.JobStatus;
import io.switchml.controller.proto.SlotCopy;
import io.switchml.controller.proto.WorkerStatus;
import io.switchml.dataplane.MissingRanks;
import io.switchml.dataplane.SlotBitmaps;
import io.switchml.dataplane.WorkerEndpoint;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/** What inspection shows of a job: the controller's {@link Job} and the switch's registers as messages. */
final class JobViews {
    /** Slot copies listed in a job's detail when the request sets no limit. */
    static final int DEFAULT_MAX_SLOT_COPIES = 256;

    private JobViews() {
    }

    /** The job as Status lists it; the caller holds the registry's lock. */
    static JobStatus status(Job job) {
        JobStatus.Builder b = JobStatus.newBuilder().setJobName(job.name).setParameters(job.parameters)
                .setInstalled(job.installed());
        if (job.tenant != null) {
            b.setTenant(job.tenant);
        }
        if (job.installed()) {
            b.setJobNumber(job.number);
            // The installed window, which admission control may have made smaller than asked.
            b.setParameters(job.parameters.toBuilder().setSlotsPerThread(job.grant.slotsPerThread()));
        }
        // Installed: every rank; forming: the ranks that have joined so far. In rank order either way.
        Map<Integer, WorkerEndpoint> endpoints = job.installed() ? job.endpoints : new TreeMap<>(job.joining.values());
        endpoints.forEach((rank, e) -> {
            boolean left = job.left.contains(rank);
            b.addWorkers("rank " + rank + " " + e.address().getHostAddress() + " ports " + Arrays.toString(e.ports())
                    + (left ? " (left)" : ""));
            WorkerStatus.Builder w = WorkerStatus.newBuilder().setRank(rank).setAddress(e.address().getHostAddress())
                    .setLeft(left).setFailed(job.failed.contains(rank));
            Arrays.stream(e.ports()).forEach(w::addPorts);
            b.addEndpoints(w);
        });
        return b.build();
    }

    /**
     * The job's detail: the controller's view, plus the switch's seen-bitmaps when it is on the
     * switch ({@code bitmaps} present), listing at most {@code maxSlotCopies} slot copies; the job id only
     * {@code withId}.
     */
    static JobDetailResponse detail(Job job, Optional<SlotBitmaps> bitmaps, int maxSlotCopies, boolean withId) {
        JobDetailResponse.Builder b = JobDetailResponse.newBuilder().setJob(status(job))
                .addAllLeftRanks(job.left).addAllFailedRanks(job.failed);
        if (withId) {
            b.setJobId(job.id);
        }
        if (job.aborted()) {
            b.setAbortedReason(job.abortReason);
        }
        bitmaps.ifPresent(slots -> {
            MissingRanks missing = MissingRanks.of(slots);
            // The switch counts a leaf's ranks from 0 (docs/ARCHITECTURE.md section 9): shown as the job's ranks.
            b.setOnSwitch(true).setSlots(slots.slots()).setIncompleteSlots(missing.incompleteSlots())
                    .addAllMissingRanks(globalRanks(job, missing.ranks()));
            // uint32: a limit of 2^31 or more arrives negative.
            long limit = maxSlotCopies == 0 ? DEFAULT_MAX_SLOT_COPIES : Integer.toUnsignedLong(maxSlotCopies);
            slots.inProgress().stream().limit(limit).forEach(round -> b.addSlotCopies(SlotCopy.newBuilder()
                    .setSlot(round.slot()).setSet(round.set()).setRound(round.round()).setRemaining(round.remaining())
                    .addAllContributedRanks(globalRanks(job, round.contributedRanks()))));
            b.setSlotCopiesTruncated(slots.inProgress().size() > limit);
        });
        b.addAllTransport(TransportReports.aged(job.transport.values(), System.nanoTime()));
        return b.build();
    }

    /** The job's ranks of the switch's positions (the same but at a leaf, whose positions start at its first rank). */
    static List<Integer> globalRanks(Job job, List<Integer> positions) {
        return job.firstRank == 0 ? positions : positions.stream().map(p -> p + job.firstRank).toList();
    }
}
