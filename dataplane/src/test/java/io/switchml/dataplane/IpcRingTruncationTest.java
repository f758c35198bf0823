package io.switchml.dataplane;

import static org.assertj.core.api.Assertions.assertThat;

import io.switchml.ipc.IpcPoller;
import io.switchml.ipc.RequestRing;
import java.io.RandomAccessFile;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Security round 4, finding 7: a request ring whose file a process of the switch's user truncates stops
 * its shared-memory port (the JVM's SIGBUS arrives as an InternalError), and the switch goes on over UDP.
 */
class IpcRingTruncationTest {
    @TempDir
    Path base;

    @Test
    void aTruncatedRingStopsItsPortAndTheSwitchGoesOnOverUdp() throws Exception {
        try (AggregationSwitch sw = AggregationSwitch.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0)
                .ipcBase(base.toString()));
             DatagramSocket worker = new DatagramSocket()) {
            Path ring = Path.of(sw.ipcDirectory().orElseThrow()).resolve(RequestRing.fileName(0));
            try (RandomAccessFile f = new RandomAccessFile(ring.toFile(), "rw")) {
                f.setLength(0);
            }
            // The doorbell a worker rings after writing to the ring: the port reads it, and finds it gone.
            ring(worker, sw);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (sw.counters().get("ipc_rings_broken") < 1) {
                assertThat(System.nanoTime()).as("the port notices its ring shrank").isLessThan(deadline);
                ring(worker, sw);
                Thread.sleep(20);
            }
            assertThat(sw.counters().get("ipc_rings_broken")).isEqualTo(1);
            // The port's thread lives on: it still counts datagrams.
            long received = sw.counters().get("packets_received");
            worker.send(new DatagramPacket(new byte[64], 64, InetAddress.getLoopbackAddress(), sw.ports()[0]));
            while (sw.counters().get("packets_received") <= received) {
                assertThat(System.nanoTime()).as("the port still receives UDP").isLessThan(deadline);
                Thread.sleep(5);
            }
        }
    }

    private static void ring(DatagramSocket worker, AggregationSwitch sw) throws Exception {
        worker.send(new DatagramPacket(new byte[IpcPoller.DOORBELL_BYTES], IpcPoller.DOORBELL_BYTES,
                InetAddress.getLoopbackAddress(), sw.ports()[0]));
    }
}
