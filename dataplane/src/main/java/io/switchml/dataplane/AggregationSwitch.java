package io.switchml.dataplane;

import io.switchml.protocol.ProtocolConstants;
import io.switchml.protocol.kernels.Kernels;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.OptionalInt;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The software aggregation switch: SwitchML's switch program (see {@link SwitchProgram}) behind
 * one or more UDP ports, each served by its own receive thread.
 *
 * <p>The control-plane methods ({@link #installJob}, {@link #removeJob}) may be called from any
 * thread at any time; the receive threads pick up each change with their next packet.
 */
public final class AggregationSwitch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AggregationSwitch.class);

    private final InetAddress bindAddress;
    private final List<SwitchPort> ports;
    private final ControlPlane controlPlane;
    private final DropProbabilities dropProbabilities;
    private final boolean allowFaultInjection;
    private final List<SwitchCounters> counters;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The shared-memory port's directory; null when the switch has none. */
    private final IpcDirectory ipc;

    private AggregationSwitch(InetAddress bindAddress, List<SwitchPort> ports, ControlPlane controlPlane,
                              DropProbabilities dropProbabilities, boolean allowFaultInjection, IpcDirectory ipc) {
        this.ipc = ipc;
        this.allowFaultInjection = allowFaultInjection;
        this.bindAddress = bindAddress;
        this.ports = ports;
        this.controlPlane = controlPlane;
        this.dropProbabilities = dropProbabilities;
        List<SwitchCounters> shards = new ArrayList<>();
        for (SwitchPort port : ports) {
            shards.add(port.counters());
        }
        this.counters = List.copyOf(shards);
    }

    /**
     * Binds every port and returns once the switch receives on all of them.
     *
     * @throws IllegalArgumentException      when the config is inconsistent, or the bind address is
     *                                       unknown or not IPv4
     * @throws java.io.UncheckedIOException when a port cannot be bound (for instance, it is in use);
     *                                       the ports bound before it are closed again
     */
    public static AggregationSwitch start(SwitchConfig config) {
        SwitchConfig settings = config.copy();
        settings.validate();
        Inet4Address address = resolve(settings.bindAddress());
        UdpTransport transport = UdpTransport.select(settings.nativeTransport());
        IpcDirectory ipc = settings.ipcBase() == null ? null : IpcDirectory.create(settings.ipcBase(), settings.portCount());
        ControlPlane controlPlane = new ControlPlane(settings.poolSlots(), settings.jobQuotaSlots(),
                settings.poolBytes(), settings.oneRoundStagingBytes(), ipc);
        DropProbabilities dropProbabilities =
                new DropProbabilities(settings.ingressDropProbability(), settings.egressDropProbability());

        List<SwitchPort> ports = new ArrayList<>();
        try {
            for (int i = 0; i < settings.portCount(); i++) {
                int port = settings.basePort() == 0 ? 0 : settings.basePort() + i;
                ports.add(SwitchPort.bind(transport, address, port, i, settings.portCount(), controlPlane,
                        dropProbabilities, settings.dropSeed() + i, ipc, settings.ipcSpinNanos(),
                        settings.udpSegmentation(), settings.udpGro()));
            }
        } catch (RuntimeException e) {
            ports.forEach(SwitchPort::close);
            if (ipc != null) {
                ipc.close();
            }
            throw e;
        }
        AggregationSwitch started = new AggregationSwitch(address, List.copyOf(ports), controlPlane, dropProbabilities,
                settings.allowFaultInjection(), ipc);
        controlPlane.ownSources(new OwnSources(address, started.ports()));
        LOG.info("switch listening on {} UDP ports {} ({} transport, offloads: {}){}; payload kernels {} on JDK {}",
                address.getHostAddress(), Arrays.toString(started.ports()), transport.name().toLowerCase(Locale.ROOT),
                ports.get(0).offloads(),
                ipc == null ? "" : "; shared-memory port for workers on this host in " + ipc.path(),
                Kernels.selected().describe(), Runtime.version().feature());
        return started;
    }

    /** The directory of the switch's shared-memory port (docs/ARCHITECTURE.md section 11); empty without one. */
    public Optional<String> ipcDirectory() {
        return ipc == null ? Optional.empty() : Optional.of(ipc.path().toString());
    }

    /** Where a co-located worker of a job finds the shared-memory port: its directory and the job's board. */
    public record IpcOffer(String directory, String board) {
    }

    /**
     * The shared-memory port for a worker of this installed job on the switch's own host
     * (docs/ARCHITECTURE.md section 11); empty when the switch has none or the job is not installed.
     */
    public Optional<IpcOffer> ipcOffer(int jobNumber) {
        return ipcFiles(jobNumber).map(files -> new IpcOffer(ipc.path().toString(), files.boardFileName()));
    }

    /**
     * Removes the names of the job's result board and request rings from the port's directory, once every rank of the
     * job mapped them or chose UDP (the controller knows from their transport reports): the switch and the workers
     * keep their mappings, and no process, of this user either, can open the files any more to shrink them under them
     * (security round 5; none of them keeps a descriptor open, so none is left under {@code /proc/PID/fd}). Returns
     * whether the job had files; removing them twice, or at the job's end, does nothing more.
     */
    public boolean ipcSeal(int jobNumber) {
        Optional<IpcDirectory.JobFiles> files = ipcFiles(jobNumber);
        files.ifPresent(ipc::delete);
        return files.isPresent();
    }

    /** The job's result board as the switch maps it, for inspection and tests; empty without one. */
    public Optional<io.switchml.ipc.ResultBoard> ipcBoard(int jobNumber) {
        return ipcFiles(jobNumber).map(IpcDirectory.JobFiles::results);
    }

    /** The job's request ring of switch port {@code portIndex} as the switch maps it, for inspection and tests. */
    public Optional<io.switchml.ipc.RequestRing> ipcRing(int jobNumber, int portIndex) {
        return ipcFiles(jobNumber).map(files -> files.ring(portIndex));
    }

    /** The shared-memory files of the installed job of that number; empty without a port, a job or files. */
    private Optional<IpcDirectory.JobFiles> ipcFiles(int jobNumber) {
        InstalledJob job = ipc == null || jobNumber < 0 || jobNumber >= ProtocolConstants.MAX_JOBS ? null
                : controlPlane.installedJob(jobNumber);
        return job == null ? Optional.empty() : Optional.ofNullable(job.ipcFiles());
    }

    /** The bound UDP ports, in port-index order. */
    public int[] ports() {
        int[] bound = new int[ports.size()];
        for (int i = 0; i < bound.length; i++) {
            bound[i] = ports.get(i).port();
        }
        return bound;
    }

    public InetAddress bindAddress() {
        return bindAddress;
    }

    /**
     * Whether (address, port) is one of the switch's own UDP sources: one of its ports on its address
     * (any address of this host, loopback included, when it listens on 0.0.0.0). No worker may have
     * one: the switch would answer itself. {@link #installJob} refuses them.
     */
    public boolean isOwnSource(InetAddress address, int port) {
        return controlPlane.ownSources().own(address, port);
    }

    /**
     * Allocates the job's registers and adds its workers to the worker table. Its slots come out of
     * the aggregator pool (see {@link #slotPool()}) until it is removed.
     *
     * @throws InsufficientSlotsException when its slots exceed the free pool or the per-job quota
     * @throws IllegalStateException      when the job number is in use, or one of the job's
     *                                    (address, port) endpoints belongs to another job
     * @throws IllegalArgumentException   when one of the job's endpoints is the switch's own address and
     *                                    port ({@link #isOwnSource})
     * @return the spec as installed: without the one-round mode when its staging exceeds
     *         {@link SwitchConfig#oneRoundStagingBytes}
     */
    public JobSpec installJob(JobSpec spec) {
        return installJob(spec, null);
    }

    /**
     * As {@link #installJob(JobSpec)}; with an uplink (not null) the job is a leaf's: each slot's
     * partial result goes on to the spine, and the spine's result to the workers
     * (docs/ARCHITECTURE.md section 9).
     *
     * @throws IllegalArgumentException when a job with an uplink has the one-round mode or no round numbers
     */
    public JobSpec installJob(JobSpec spec, UplinkSpec uplink) {
        return installJob(spec, uplink, LOG::info);
    }

    /**
     * As {@link #installJob(JobSpec, UplinkSpec)}, with the lines that say what was installed going to {@code lines}
     * instead of this class's log: the controller passes its per-tenant limited log (docs/security.md, "Lines
     * about jobs"), since a caller's joins cause them.
     */
    public JobSpec installJob(JobSpec spec, UplinkSpec uplink, Consumer<String> lines) {
        JobSpec installed = controlPlane.installJob(spec, uplink);
        lines.accept("installed job " + spec.jobNumber() + " '" + spec.name() + "': " + spec.workers() + " workers, "
                + spec.slots() + " slots (" + spec.threads() + " threads x " + spec.slotsPerThread() + "), "
                + spec.size().bytes() + " B payload" + oneRoundText(spec, installed)
                + (spec.authenticated() ? ", authenticated packets" : ""));
        if (uplink != null) {
            lines.accept("job " + spec.jobNumber() + " '" + spec.name() + "' is a leaf's: its partial results go to "
                    + uplink);
        }
        return installed;
    }

    private String oneRoundText(JobSpec asked, JobSpec installed) {
        if (installed.oneRoundElements() > 0) {
            return ", one round up to " + installed.oneRoundElements() + " values per worker thread ("
                    + installed.oneRoundStagingBytes() + " B staging)";
        }
        return asked.oneRoundElements() > 0 ? ", no one-round mode: its staging (" + asked.oneRoundStagingBytes()
                + " B) exceeds the switch's limit of " + controlPlane.oneRoundStagingBytes() + " B per job" : "";
    }

    /** Removes the job, freeing its registers and worker-table entries; an unknown number is a no-op. */
    public void removeJob(int jobNumber) {
        removeJob(jobNumber, LOG::info);
    }

    /** As {@link #removeJob(int)}, with its line going to {@code lines} (see {@link #installJob(JobSpec, UplinkSpec, Consumer)}). */
    public void removeJob(int jobNumber, Consumer<String> lines) {
        Optional<JobSpec> removed = controlPlane.job(jobNumber);
        controlPlane.removeJob(jobNumber);
        removed.ifPresent(spec -> lines.accept("removed job " + spec.jobNumber() + " '" + spec.name() + "'"));
    }

    /** The aggregator pool now: its size, the per-job quota, and the slots the installed jobs hold. */
    public SlotPool slotPool() {
        return controlPlane.slotPool();
    }

    /** The installed job with this number, if any. */
    public Optional<JobSpec> job(int jobNumber) {
        return controlPlane.job(jobNumber);
    }

    /**
     * A number that changes while the job's rounds complete (no count: read it twice and compare); empty
     * when the job is not installed. For the controller's idle check.
     */
    public OptionalInt activity(int jobNumber) {
        if (job(jobNumber).isEmpty()) {
            return OptionalInt.empty();
        }
        int sum = 0;
        for (SwitchPort port : ports) {
            sum += port.activity().get(jobNumber);
        }
        return OptionalInt.of(sum);
    }

    /**
     * The ranks the switch is still waiting for in the job: those with no bit in the seen-bitmap of
     * some slot copy whose round is in progress. Empty when the job is not installed.
     *
     * <p>For diagnosis only: the registers belong to the receive threads and are read here without
     * synchronizing with them, so the answer may mix moments (a round may complete or open while it
     * is read). It is exact once the job's traffic has stopped, which is when a timeout asks.
     */
    public Optional<MissingRanks> missingRanks(int jobNumber) {
        return slotBitmaps(jobNumber).map(MissingRanks::of);
    }

    /**
     * The seen-bitmaps of the job's slot copies whose round is in progress; empty when the job is
     * not installed. For inspection only, read like {@link #missingRanks}: without synchronizing
     * with the receive threads that own the registers, so it may mix moments while traffic flows.
     */
    public Optional<SlotBitmaps> slotBitmaps(int jobNumber) {
        InstalledJob job = jobNumber >= 0 && jobNumber < ProtocolConstants.MAX_JOBS
                ? controlPlane.installedJob(jobNumber) : null;
        return job == null ? Optional.empty() : Optional.of(SlotBitmaps.of(job));
    }

    /**
     * A snapshot of the counters summed over the ports, by stable name: packets_received, datagrams_received,
     * ingress_simulated_drops, contributions, results_sent (multicast results),
     * retransmissions_answered (unicast), retransmissions_dropped, packets_sent (results, one per recipient),
     * datagrams_sent and segmented_datagrams_sent (a run of results to one worker counts once, docs/ARCHITECTURE.md
     * section 17), udp_segmentation_off and udp_gro_off (ports without the offload they asked for),
     * egress_simulated_drops, egress_queue_full_drops, ipc_results (results written to a job's board on
     * the shared-memory port), ipc_wake_ups (sent), ipc_wake_ups_received, io_errors, and one drops_&lt;reason&gt; per
     * reason a packet is refused: drops_truncated, drops_too_long, drops_wrong_msg_type,
     * drops_unused_bits, drops_unknown_source, drops_unknown_job, drops_job_mismatch,
     * drops_size_mismatch, drops_slot_out_of_range, drops_wrong_port, ..., drops_bad_tag (see {@link DropReason}).
     */
    public Map<String, Long> counters() {
        return Collections.unmodifiableMap(SwitchCounters.snapshot(counters));
    }

    /**
     * Changes the drop simulator's probabilities while the switch runs; each in [0, 1]. The receive
     * threads read them with a volatile read per packet, without a lock.
     *
     * @throws FaultInjectionRefusedException when either is above 0 and the switch was not started
     *                                        with {@link SwitchConfig#allowFaultInjection}; nothing changes
     */
    public void setDropProbabilities(double ingress, double egress) {
        if (!allowFaultInjection && (ingress > 0 || egress > 0)) {
            throw new FaultInjectionRefusedException();
        }
        dropProbabilities.set(ingress, egress);
    }

    /** Whether the drop simulator may be set above 0 ({@link SwitchConfig#allowFaultInjection}). */
    public boolean faultInjectionAllowed() {
        return allowFaultInjection;
    }

    /** The probability that the drop simulator drops a packet on arrival. */
    public double ingressDropProbability() {
        return dropProbabilities.ingress();
    }

    /** The probability that the drop simulator drops each result datagram before it leaves. */
    public double egressDropProbability() {
        return dropProbabilities.egress();
    }

    /** Closes every port and stops its thread; returns when they are released. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            ports.forEach(SwitchPort::close);
            if (ipc != null) {
                ipc.close();
            }
            LOG.info("switch on {} closed", bindAddress.getHostAddress());
        }
    }

    private static Inet4Address resolve(String bindAddress) {
        InetAddress address;
        try {
            address = InetAddress.getByName(bindAddress);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("unknown bind address " + bindAddress, e);
        }
        if (!(address instanceof Inet4Address ipv4)) {
            throw new IllegalArgumentException("bind address " + bindAddress + " is not IPv4; workers are identified by IPv4 address");
        }
        return ipv4;
    }
}
