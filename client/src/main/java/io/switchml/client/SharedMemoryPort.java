package io.switchml.client;

import io.switchml.api.SwitchMLException;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.ipc.RequestRing;
import io.switchml.ipc.ResultBoard;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This worker's mapping of the switch's shared-memory port (docs/ARCHITECTURE.md section 11): the
 * job's request ring of each switch port its threads use and the job's result board. Chosen by
 * {@link #choose} from the {@code transport} setting and what the controller offered.
 */
final class SharedMemoryPort {
    private static final Logger LOG = LoggerFactory.getLogger(SharedMemoryPort.class);

    private final RequestRing[] rings;
    private final ResultBoard board;
    /** This worker's place on the board: its rank in the job as this switch installed it (a leaf's: local). */
    private final int boardRank;

    private SharedMemoryPort(RequestRing[] rings, ResultBoard board, int boardRank) {
        this.rings = rings;
        this.board = board;
        this.boardRank = boardRank;
    }

    /**
     * The shared-memory port this worker uses, or null for UDP: with {@code udp}, with fault injection
     * (it acts on datagrams), or with {@code auto} when the switch offered none (another host, or a switch without one) or its files cannot be
     * mapped here (another container).
     *
     * @throws SwitchMLException with {@code ipc} when there is no port to use, saying why
     */
    static SharedMemoryPort choose(SwitchMLConfig config, JoinResponse joined) {
        SwitchMLConfig.Transport transport = config.transport();
        if (transport == SwitchMLConfig.Transport.UDP) {
            return null;
        }
        if (config.faultInjection().enabled()) {
            // The faults act on datagrams (FaultInjector, in the socket's pipeline); the port carries none.
            if (transport == SwitchMLConfig.Transport.IPC) {
                throw new SwitchMLException("rank " + config.rank() + " of job '" + config.job() + "': "
                        + SwitchMLConfig.Key.TRANSPORT.property() + "=ipc with fault injection (" + config.faultInjection()
                        + "): the faults act on datagrams, and the shared-memory port carries none. Use transport=udp"
                        + " (or auto, which then takes UDP).");
            }
            return null;
        }
        if (joined.getIpcDirectory().isEmpty()) {
            if (transport == SwitchMLConfig.Transport.IPC) {
                throw new SwitchMLException("rank " + config.rank() + " of job '" + config.job() + "': "
                        + SwitchMLConfig.Key.TRANSPORT.property() + "=ipc, but the switch offers no shared-memory port"
                        + " to this worker: it is on another host (the switch does not have this worker's address), or"
                        + " the switch runs without one (--no-ipc). Use transport=auto or udp.");
            }
            return null;
        }
        try {
            Path directory = Paths.get(joined.getIpcDirectory());
            ResultBoard board = ResultBoard.open(directory.resolve(joined.getIpcBoard()));
            int ports = joined.getSwitchPortsCount();
            RequestRing[] rings = new RequestRing[Math.min(ports, config.threads())];
            for (int p = 0; p < rings.length; p++) {
                rings[p] = RequestRing.open(directory.resolve(RequestRing.fileName(joined.getIpcBoard(), p)));
            }
            if (rings[0].maxPacketBytes() < config.payloadSize().packetBytes()) {
                throw new IllegalArgumentException("its ring takes packets of at most " + rings[0].maxPacketBytes() + " bytes");
            }
            if (joined.getIpcRank() >= board.workers()) {
                throw new IllegalArgumentException("the switch placed this worker at " + joined.getIpcRank() + " on a board of "
                        + board.workers() + " workers");
            }
            return new SharedMemoryPort(rings, board, joined.getIpcRank());
        } catch (RuntimeException e) {
            String why = "cannot use the switch's shared-memory port in " + joined.getIpcDirectory() + ": " + e.getMessage();
            if (transport == SwitchMLConfig.Transport.IPC) {
                throw new SwitchMLException("rank " + config.rank() + " of job '" + config.job() + "': " + why, e);
            }
            LOG.info("rank {}: {}; using UDP", config.rank(), why);
            return null;
        }
    }

    /** Tells the switch that this worker reads its results from the board; before any packet goes out. */
    void attach() {
        board.attach(boardRank);
    }

    /** The link of worker thread {@code thread}, whose slots start at {@code slotBase}. */
    IpcLink link(int thread, int slotBase, int window, WorkerStatistics statistics, long spinNanos) {
        return new IpcLink(rings[thread % rings.length], board, boardRank, thread, slotBase, window, statistics, spinNanos);
    }
}
