package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.switchml.ipc.IpcPoller;
import io.switchml.ipc.RequestRing;
import io.switchml.ipc.ResultBoard;
import io.switchml.protocol.PayloadSize;
import java.io.RandomAccessFile;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Security round 5, item 3: each job has request rings of its own (docs/ARCHITECTURE.md section 11). Once the job's
 * files are sealed their names are gone, so a process of the switch's user finds nothing to truncate; a ring truncated
 * before that (round 4's finding 7, which stopped the whole port) stops that job's ring alone, and another job on the
 * same port goes on.
 */
class IpcRingTruncationTest {
    private static final PayloadSize SIZE = PayloadSize.B256;

    @TempDir
    Path base;

    @Test
    void aTruncatedRingStopsThatJobAloneAndAnotherJobOnThePortGoesOn() throws Exception {
        try (AggregationSwitch sw = AggregationSwitch.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0)
                .ipcBase(base.toString()));
             DatagramSocket worker = new DatagramSocket()) {
            JobSpec victim = sw.installJob(TestJobs.job(1, 2, SIZE, 4, 1, true));
            JobSpec other = sw.installJob(TestJobs.job(2, 2, SIZE, 4, 1, true));
            Path victimRing = ringFile(sw, victim);
            RequestRing otherRing = attachEveryRank(sw, other);
            try (RandomAccessFile f = new RandomAccessFile(victimRing.toFile(), "rw")) {
                f.setLength(0);
            }
            // The doorbell a worker rings after writing to a ring: the port looks at its rings, and finds one shrank.
            waitUntil(() -> sw.counters().get("ipc_rings_broken") >= 1, () -> doorbell(worker, sw),
                    "the port to notice job 1's ring shrank");

            sumOnce(sw, worker, other, otherRing, 2);
            assertThat(sw.counters().get("ipc_rings_broken")).as("only job 1's ring stopped").isEqualTo(1);
            assertThat(sw.counters().get("ipc_board_faults")).isZero();
        }
    }

    @Test
    void aSealedJobLeavesNothingToTruncateAndItsRingsAndBoardStillWork() throws Exception {
        try (AggregationSwitch sw = AggregationSwitch.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0)
                .ipcBase(base.toString()).portCount(2));
             DatagramSocket worker = new DatagramSocket()) {
            JobSpec job = sw.installJob(TestJobs.job(3, 2, SIZE, 4, 2, true));
            Path directory = Path.of(sw.ipcDirectory().orElseThrow());
            assertThat(jobFiles(directory)).as("a board and a ring per switch port").hasSize(3);
            RequestRing ring = attachEveryRank(sw, job);

            assertThat(sw.ipcSeal(job.jobNumber())).isTrue();
            assertThat(jobFiles(directory)).as("files of the sealed job left to open in " + directory).isEmpty();
            assertThatThrownBy(() -> FileChannel.open(ringFile(sw, job), StandardOpenOption.WRITE).close())
                    .isInstanceOf(NoSuchFileException.class);

            // The mappings outlive the names: the job goes on through them.
            sumOnce(sw, worker, job, ring, 4);
            assertThat(sw.counters().get("ipc_rings_broken")).isZero();
        }
    }

    @Test
    void eachJobsRingHoldsItsWindowOfPacketsWithinTheBounds() {
        JobSpec small = TestJobs.job(1, 2, PayloadSize.B256, 4, 1, true);
        assertThat(IpcDirectory.requestRingBytes(small, 1, 0)).isEqualTo(IpcDirectory.MIN_REQUEST_RING_BYTES);
        // 8 workers x 4 threads x 32 slots of 8 KiB packets, twice over: more than the most a ring takes.
        JobSpec big = TestJobs.job(2, 8, PayloadSize.B8192, 32, 4, true);
        assertThat(IpcDirectory.requestRingBytes(big, 1, 0)).isEqualTo(IpcDirectory.MAX_REQUEST_RING_BYTES);
        // 4 workers x 16 slots of port 1's one thread, 1 KiB packets, twice over, rounded up to a power of two.
        JobSpec mid = TestJobs.job(3, 4, PayloadSize.B1024, 16, 2, true);
        int bytes = IpcDirectory.requestRingBytes(mid, 2, 1);
        assertThat(Integer.bitCount(bytes)).isEqualTo(1);
        assertThat((long) bytes).isGreaterThanOrEqualTo(2L * 4 * 16 * (mid.size().packetBytes() + 16))
                .isLessThan(4L * 4 * 16 * (mid.size().packetBytes() + 16));
    }

    /** Every rank of {@code job} reads its results on the board, as a worker's session does; returns port 0's ring. */
    private static RequestRing attachEveryRank(AggregationSwitch sw, JobSpec job) {
        ResultBoard board = sw.ipcBoard(job.jobNumber()).orElseThrow();
        for (int rank = 0; rank < job.workers(); rank++) {
            board.attach(rank);
        }
        return RequestRing.open(ringFile(sw, job));
    }

    /** Each rank's packet for slot 0 through the ring: the port reads them and writes the sum to the board. */
    private static void sumOnce(AggregationSwitch sw, DatagramSocket worker, JobSpec job, RequestRing ring, int value)
            throws Exception {
        long results = sw.counters().get("ipc_results");
        for (int rank = 0; rank < job.workers(); rank++) {
            int ipv4 = Ipv4.toInt(job.endpoints().get(rank).address());
            assertThat(ring.offer(ipv4, TestJobs.FIRST_WORKER_PORT,
                    TestPackets.packet(SIZE, job.jobNumber(), 0, 0, 0, 0, 0, value))).isTrue();
        }
        waitUntil(() -> sw.counters().get("ipc_results") > results, () -> doorbell(worker, sw),
                "job " + job.jobNumber() + "'s result on its board");
    }

    private static Path ringFile(AggregationSwitch sw, JobSpec job) {
        String board = sw.ipcOffer(job.jobNumber()).orElseThrow().board();
        return Path.of(sw.ipcDirectory().orElseThrow()).resolve(RequestRing.fileName(board, 0));
    }

    private static List<Path> jobFiles(Path directory) throws Exception {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(f -> f.getFileName().toString().startsWith("job-")).toList();
        }
    }

    private static void doorbell(DatagramSocket worker, AggregationSwitch sw) {
        try {
            worker.send(new DatagramPacket(new byte[IpcPoller.DOORBELL_BYTES], IpcPoller.DOORBELL_BYTES,
                    InetAddress.getLoopbackAddress(), sw.ports()[0]));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void waitUntil(BooleanSupplier condition, Runnable nudge, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            nudge.run();
            Thread.sleep(10);
        }
    }
}
