package io.switchml.dataplane;

/**
 * A job installed on the switch: its spec, its register arrays (one instance of each block of
 * the switch program, sized for the job when it is installed), and where its results go.
 *
 * <p>Each slot's registers are written only by the receive thread of the port that slot arrives on
 * (see {@link PacketValidator}), so they need no synchronization.
 */
final class InstalledJob {
    private final JobSpec spec;
    private final int sizeCode;
    private final int slots;
    private final int slotsPerThread;
    /** Null for jobs of SwitchML's workers, whose tsi is not a round number. */
    private final RoundChecker roundChecker;
    private final LengthChecker lengthChecker;
    private final BitmapChecker bitmapChecker;
    private final WorkersCounter workersCounter;
    private final Exponents exponents;
    private final Processor processor;
    /** Null for jobs without the one-round mode. */
    private final OneRoundStaging oneRoundStaging;
    private final WorkerAddresses addresses;
    /** Null for jobs without a spine (all but a leaf's). */
    private final Uplink uplink;
    /** Where co-located workers write the job's packets and read its results (docs/ARCHITECTURE.md section 11); null without. */
    private final IpcDirectory.JobFiles ipcFiles;

    InstalledJob(JobSpec spec) {
        this(spec, null, null);
    }

    InstalledJob(JobSpec spec, UplinkSpec uplinkSpec, IpcDirectory.JobFiles ipcFiles) {
        this.spec = spec;
        this.ipcFiles = ipcFiles;
        this.sizeCode = spec.size().code();
        this.slots = spec.slots();
        this.slotsPerThread = spec.slotsPerThread();
        this.roundChecker = spec.roundNumbers() ? new RoundChecker(slots) : null;
        this.lengthChecker = new LengthChecker(slots);
        this.bitmapChecker = new BitmapChecker(slots, spec.workers());
        this.workersCounter = new WorkersCounter(slots, spec.workers());
        this.exponents = new Exponents(slots);
        this.processor = new Processor(slots, spec.size().elements());
        this.oneRoundStaging = spec.oneRoundElements() > 0
                ? new OneRoundStaging(slots, spec.workers(), spec.oneRoundStagingElements()) : null;
        this.addresses = new WorkerAddresses(spec);
        this.uplink = uplinkSpec != null ? new Uplink(slots, spec.threads(), uplinkSpec) : null;
    }

    JobSpec spec() {
        return spec;
    }

    /** The job's result board and request rings on the shared-memory port, or null. */
    IpcDirectory.JobFiles ipcFiles() {
        return ipcFiles;
    }

    int sizeCode() {
        return sizeCode;
    }

    int slots() {
        return slots;
    }

    int slotsPerThread() {
        return slotsPerThread;
    }

    RoundChecker roundChecker() {
        return roundChecker;
    }

    LengthChecker lengthChecker() {
        return lengthChecker;
    }

    BitmapChecker bitmapChecker() {
        return bitmapChecker;
    }

    WorkersCounter workersCounter() {
        return workersCounter;
    }

    Exponents exponents() {
        return exponents;
    }

    Processor processor() {
        return processor;
    }

    OneRoundStaging oneRoundStaging() {
        return oneRoundStaging;
    }

    WorkerAddresses addresses() {
        return addresses;
    }

    /** Where a leaf's job sends its partials; null for other jobs. */
    UplinkSpec uplinkSpec() {
        return uplink == null ? null : uplink.spec();
    }

    /** The uplink block of a leaf's job; null for other jobs. */
    Uplink uplink() {
        return uplink;
    }
}
