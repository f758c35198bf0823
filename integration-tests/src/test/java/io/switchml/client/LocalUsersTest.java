package io.switchml.client;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.switchml.controller.AggregationService;
import io.switchml.controller.ControllerSecurity;
import io.switchml.controller.compat.proto.PacketSize;
import io.switchml.controller.compat.proto.SessionGrpc;
import io.switchml.controller.compat.proto.UdpSessionRequest;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JobStatus;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.LeaveRequest;
import io.switchml.controller.proto.StatusRequest;
import io.switchml.dataplane.SwitchConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * Security round 5, item 1 (docs/security.md, "Local users are tenants"): on a switch with its defaults, the
 * tenant of a caller on the switch's own host is its user, as the kernel's socket table says. An unprivileged
 * throwaway uid fills its share of the job numbers, of the slots and register memory (with the biggest packets),
 * and of the waiting joins; after each, a job of another throwaway uid forms and is exact, and another process of
 * the attacker's uid is refused with the clear message one tenant got before. The switch's own user (root here)
 * ends the attacker's jobs as the operator, without a token.
 *
 * <p>Each uid's calls reach the switch through a relay process running as that uid (a few lines of Java run with
 * {@code setpriv}): the connection the switch accepts is the relay's socket, owned by that uid in the kernel's
 * table, exactly as a client library of that user would open it. Needs root and setpriv, as round 4's
 * {@code IpcDirectoryTest} does.
 */
class LocalUsersTest {
    private static final int JOB_NUMBERS_SHARE = 128; // half of the 256 job numbers

    private static final String RELAY = """
            import java.io.*;
            import java.net.*;
            import java.nio.ByteBuffer;
            import java.nio.channels.SocketChannel;

            public class Relay {
                public static void main(String[] args) throws Exception {
                    String target = args[0];
                    ServerSocket server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
                    System.out.println("PORT " + server.getLocalPort());
                    System.out.flush();
                    Thread stdin = new Thread(() -> {
                        try {
                            while (System.in.read() >= 0) { }
                        } catch (IOException e) { }
                        System.exit(0); // the test closed our stdin, or died
                    });
                    stdin.setDaemon(true);
                    stdin.start();
                    while (true) {
                        Socket accepted = server.accept();
                        accepted.setTcpNoDelay(true);
                        // The switch's TCP port, or its Unix-domain control socket (a path).
                        SocketChannel upstream = target.startsWith("/")
                                ? SocketChannel.open(UnixDomainSocketAddress.of(target))
                                : SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(),
                                        Integer.parseInt(target)));
                        pump(accepted, upstream);
                    }
                }

                /** Both ways between a TCP socket and a channel, each on its own thread. */
                static void pump(Socket socket, SocketChannel channel) throws IOException {
                    InputStream in = socket.getInputStream();
                    OutputStream out = socket.getOutputStream();
                    daemon(() -> {
                        byte[] b = new byte[65536];
                        try {
                            int n;
                            while ((n = in.read(b)) >= 0) {
                                ByteBuffer buffer = ByteBuffer.wrap(b, 0, n);
                                while (buffer.hasRemaining()) {
                                    channel.write(buffer);
                                }
                            }
                        } catch (IOException e) { }
                        close(socket, channel);
                    });
                    daemon(() -> {
                        ByteBuffer buffer = ByteBuffer.allocate(65536);
                        try {
                            while (channel.read(buffer) >= 0) {
                                out.write(buffer.array(), 0, buffer.position());
                                buffer.clear();
                            }
                        } catch (IOException e) { }
                        close(socket, channel);
                    });
                }

                static void close(Socket socket, SocketChannel channel) {
                    try {
                        socket.close();
                        channel.close();
                    } catch (IOException e) { }
                }

                static void daemon(Runnable r) {
                    Thread t = new Thread(r);
                    t.setDaemon(true);
                    t.start();
                }

            }
            """;

    private Path dir;
    private AggregationService service;
    private final List<Relay> relays = new ArrayList<>();
    private final List<ManagedChannel> channels = new ArrayList<>();

    @BeforeEach
    void start() throws IOException {
        assumeThat(System.getProperty("user.name")).as("needs root, to run callers as throwaway uids (setpriv)")
                .isEqualTo("root");
        assumeThat(Files.isExecutable(Path.of("/usr/bin/setpriv"))).as("needs setpriv (util-linux)").isTrue();
        assumeThat(Files.isReadable(Path.of("/proc/net/tcp"))).as("needs the kernel's socket table").isTrue();
        dir = Files.createTempDirectory(Path.of("/tmp"), "switchml-local-users-");
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path source = dir.resolve("Relay.java");
        Files.writeString(source, RELAY);
        Files.setPosixFilePermissions(source, PosixFilePermissions.fromString("rw-r--r--"));
        // A switch with its defaults: shares on (--tenant-share 0.5), the switch's own user and root its operator.
        service = AggregationService.start(new SwitchConfig().bindAddress("127.0.0.1").basePort(0), "127.0.0.1", 0,
                new ControllerSecurity());
    }

    @AfterEach
    void stop() throws IOException {
        channels.forEach(ManagedChannel::shutdownNow);
        relays.forEach(Relay::close);
        if (service != null) {
            service.close();
        }
        if (dir != null) {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void anotherUsersJobFormsAndIsExactWhateverOneUserHolds() throws Exception {
        int[] uids = freeUids(2);
        int attackerUid = uids[0];
        int victimUid = uids[1];
        String attacker = "uid " + attackerUid;
        ControllerGrpc.ControllerBlockingStub flood = stub(channelThrough(relay(attackerUid)));
        // Another process of the attacker's user: the same tenant.
        ControllerGrpc.ControllerBlockingStub sameUser = stub(channelThrough(relay(attackerUid)));
        int victimPort = relay(victimUid).port;
        ControllerGrpc.ControllerBlockingStub root = stub(channel(service.controllerPort()));

        // 1. The job numbers: the attacker's user runs its share, 128 one-rank jobs.
        List<Integer> held = new ArrayList<>();
        JobParameters small = params(1, 256, 1, 8);
        for (int i = 0; i < JOB_NUMBERS_SHARE; i++) {
            held.add(flood.join(join("jobs-" + i, small, 20_000 + i).build()).getJobNumber());
        }
        String refused = refusal(() -> sameUser.join(join("jobs-one-more", small, 21_000).build()));
        System.out.println("the attacker's user after " + JOB_NUMBERS_SHARE + " jobs: " + refused);
        assertThat(refused).contains("RESOURCE_EXHAUSTED", "tenant " + attacker, "already runs " + JOB_NUMBERS_SHARE
                + " jobs", "--tenant-share");
        assertThat(tenantsOf(root)).as("ctl jobs: who holds what").containsEntry("jobs-0", attacker);
        victimJobIsExact(victimPort, "victim-jobs", 1);
        endAll(root, held);

        // 2. Slots and register memory: jobs of the biggest packets and the most slots a job may ask for.
        JobParameters big = params(1, 15_360, 16, 1024);
        String bigRefused = null;
        for (int i = 0; i < 8 && bigRefused == null; i++) {
            try {
                JoinResponse r = flood.join(join("bigpkt-" + i, big, 22_000 + 100 * i).build());
                held.add(r.getJobNumber());
                System.out.println("big job " + i + ": " + r.getAdmission());
            } catch (StatusRuntimeException e) {
                bigRefused = e.getStatus().getCode() + ": " + e.getStatus().getDescription();
            }
        }
        assertThat(bigRefused).as("the attacker's user is refused once its share is held").isNotNull();
        String bigAgain = refusal(() -> sameUser.join(join("bigpkt-again", big, 23_000).build()));
        System.out.println("the attacker's user after " + held.size() + " big jobs: " + bigRefused + " / " + bigAgain);
        assertThat(bigAgain).contains("RESOURCE_EXHAUSTED", "its tenant " + attacker + " may hold only",
                "--tenant-share 0.5");
        long poolSlots = service.dataplane().slotPool().poolSlots();
        long poolBytes = service.dataplane().slotPool().poolBytes();
        long slots = 0;
        long bytes = 0;
        for (int n : held) {
            slots += service.dataplane().job(n).orElseThrow().slots();
            bytes += service.dataplane().job(n).orElseThrow().memoryBytes();
        }
        System.out.printf("the attacker's user holds %d of %d slots, %d of %d register bytes%n", slots, poolSlots,
                bytes, poolBytes);
        assertThat(slots).isLessThanOrEqualTo(poolSlots / 2);
        assertThat(bytes).isLessThanOrEqualTo(poolBytes / 2);
        victimJobIsExact(victimPort, "victim-memory", 2);
        endAll(root, held);

        // 3. Waiting joins: 1024 ranks of two-rank jobs whose other rank never comes.
        ControllerGrpc.ControllerStub async = ControllerGrpc.newStub(channels.get(0));
        JobParameters pair = params(2, 256, 1, 8);
        List<Integer> toSend = new ArrayList<>();
        for (int i = 0; i < 1024; i++) {
            toSend.add(i);
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!toSend.isEmpty() && System.nanoTime() < deadline) {
            List<Integer> again = java.util.Collections.synchronizedList(new ArrayList<>());
            AtomicInteger answered = new AtomicInteger();
            for (int i : toSend) {
                async.join(join("waiting-" + i, pair, 30_000 + i).setTimeoutMs(120_000).build(), new StreamObserver<>() {
                    @Override
                    public void onNext(JoinResponse value) {
                    }

                    @Override
                    public void onError(Throwable t) {
                        if (String.valueOf(Status.fromThrowable(t).getDescription()).contains("too many join requests")) {
                            again.add(i); // the per-tenant join rate: sent again below
                        }
                        answered.incrementAndGet();
                    }

                    @Override
                    public void onCompleted() {
                    }
                });
            }
            awaitPending(toSend.size() - again.size(), answered, toSend.size());
            toSend = new ArrayList<>(again);
            Thread.sleep(200);
        }
        awaitPendingJoins(1024);
        String waitRefused = refusal(() -> sameUser.join(join("waiting-one-more", pair, 31_100).build()));
        System.out.println("the attacker's user with 1024 joins waiting: " + waitRefused);
        assertThat(waitRefused).contains("RESOURCE_EXHAUSTED", "tenant " + attacker + " already has 1024 ranks waiting");
        victimJobIsExact(victimPort, "victim-waiting", 3);

        // 4. SwitchML sessions (no credentials, but a local user's are its own): the attacker's user holds its share.
        SessionGrpc.SessionBlockingStub sessions = SessionGrpc.newBlockingStub(channels.get(0))
                .withDeadlineAfter(20, TimeUnit.SECONDS);
        sessions.udpSession(session(1));
        sessions.udpSession(session(2));
        String sessionRefused = refusal(() -> SessionGrpc.newBlockingStub(channels.get(1))
                .withDeadlineAfter(20, TimeUnit.SECONDS).udpSession(session(3)));
        System.out.println("the attacker's user with 2 SwitchML sessions: " + sessionRefused);
        assertThat(sessionRefused).contains("RESOURCE_EXHAUSTED", "SwitchML's sessions of " + attacker, "--tenant-share");
        ManagedChannel victimChannel = channel(victimPort);
        SessionGrpc.newBlockingStub(victimChannel).withDeadlineAfter(20, TimeUnit.SECONDS).udpSession(session(4));
        java.util.Map<String, String> tenants = tenantsOf(root);
        assertThat(tenants).containsEntry("switchml-session-1", "SwitchML sessions of " + attacker)
                .containsEntry("switchml-session-4", "SwitchML sessions of uid " + victimUid);
    }

    /** A one-rank SwitchML session from 127.0.0.{1 + id}. */
    private static UdpSessionRequest session(int id) {
        return UdpSessionRequest.newBuilder().setSessionId(id).setRank(0).setNumWorkers(1).setIpv4(0x7F00_0001 + id)
                .setPacketSize(PacketSize.MTU_256).build();
    }

    /**
     * The same user over the switch's Unix-domain control socket: the switch reads its uid from the kernel
     * (SO_PEERCRED), the socket table plays no part; the attacker's user fills its share of job numbers there, is
     * refused as itself, and another user's job forms and is exact.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void overTheControlSocketAUserIsItsUid() throws Exception {
        assumeThat(service.controlSocket()).as("needs the switch's Unix-domain control socket (epoll)").isPresent();
        int[] uids = freeUids(2);
        String socket = service.controlSocket().orElseThrow().toString();
        ControllerGrpc.ControllerBlockingStub flood = stub(channelThrough(relay(uids[0], socket)));
        int victimPort = relay(uids[1], socket).port;
        ControllerGrpc.ControllerBlockingStub root = stub(channel(service.controllerPort()));
        JobParameters small = params(1, 256, 1, 8);
        List<Integer> held = new ArrayList<>();
        for (int i = 0; i < JOB_NUMBERS_SHARE; i++) {
            held.add(flood.join(join("socket-jobs-" + i, small, 20_000 + i).build()).getJobNumber());
        }
        String refused = refusal(() -> flood.join(join("socket-one-more", small, 21_000).build()));
        System.out.println("the attacker's user over the control socket after " + JOB_NUMBERS_SHARE + " jobs: " + refused);
        assertThat(refused).contains("RESOURCE_EXHAUSTED", "tenant uid " + uids[0] + " already runs");
        assertThat(tenantsOf(root)).containsEntry("socket-jobs-0", "uid " + uids[0]);
        victimJobIsExact(victimPort, "victim-over-the-socket", 5);
        endAll(root, held);
    }

    /** Two ranks of a job whose controller calls go through {@code relayPort} (another uid's): formed, and exact. */
    private void victimJobIsExact(int relayPort, String name, long seed) {
        try (LocalCluster victim = LocalCluster.onSwitch(service, name, 2,
                b -> b.controller("127.0.0.1:" + relayPort).elementsPerPacket(256))) {
            AllReduceExactnessTest.checkFloatSum(victim, seed, 100_000, 256);
        }
    }

    /** The switch's own user (root) ends jobs by number alone, as `switchml ctl end-session NUMBER` does. */
    private void endAll(ControllerGrpc.ControllerBlockingStub root, List<Integer> numbers) {
        for (int n : numbers) {
            root.leave(LeaveRequest.newBuilder().setJobNumber(n).build());
            assertThat(service.dataplane().job(n)).as("job number %d after the operator ended it", n).isEmpty();
        }
        numbers.clear();
    }

    private static java.util.Map<String, String> tenantsOf(ControllerGrpc.ControllerBlockingStub root) {
        return root.status(StatusRequest.getDefaultInstance()).getJobsList().stream()
                .collect(Collectors.toMap(JobStatus::getJobName, JobStatus::getTenant, (a, b) -> a));
    }

    private void awaitPending(int expected, AtomicInteger answered, int sent) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline && service.pendingJoins() + answered.get() < sent) {
            Thread.sleep(20);
        }
    }

    private void awaitPendingJoins(int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline && service.pendingJoins() < count) {
            Thread.sleep(20);
        }
        assertThat(service.pendingJoins()).as("joins waiting").isEqualTo(count);
    }

    private static String refusal(Runnable call) {
        try {
            call.run();
        } catch (StatusRuntimeException e) {
            return e.getStatus().getCode() + ": " + e.getStatus().getDescription();
        }
        throw new AssertionError("the call was not refused");
    }

    private static JobParameters params(int workers, int elements, int threads, int slotsPerThread) {
        return JobParameters.newBuilder().setNumWorkers(workers).setElementsPerPacket(elements).setThreads(threads)
                .setSlotsPerThread(slotsPerThread).build();
    }

    private static JoinRequest.Builder join(String name, JobParameters parameters, int basePort) {
        JoinRequest.Builder b = JoinRequest.newBuilder().setJobName(name).setRank(0).setParameters(parameters)
                .setAddress("127.0.0.1").setTimeoutMs(30_000);
        for (int t = 0; t < parameters.getThreads(); t++) {
            b.addPorts(basePort + t);
        }
        return b;
    }

    private ManagedChannel channel(int port) {
        ManagedChannel c = ManagedChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        channels.add(c);
        return c;
    }

    private ManagedChannel channelThrough(Relay relay) {
        return channel(relay.port);
    }

    private static ControllerGrpc.ControllerBlockingStub stub(ManagedChannel channel) {
        return ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(60, TimeUnit.SECONDS);
    }

    /** Uids that no account of this host has: throwaway users of this test. */
    private static int[] freeUids(int count) throws IOException {
        Set<String> taken = Files.readAllLines(Path.of("/etc/passwd")).stream().map(l -> l.split(":", -1))
                .filter(f -> f.length > 2).map(f -> f[2]).collect(Collectors.toSet());
        int[] uids = new int[count];
        int found = 0;
        for (int uid = 61_000 + (int) (ProcessHandle.current().pid() % 1000); found < count; uid++) {
            if (!taken.contains(Integer.toString(uid))) {
                uids[found++] = uid;
            }
        }
        return uids;
    }

    private Relay relay(int uid) throws IOException {
        return relay(uid, Integer.toString(service.controllerPort()));
    }

    private Relay relay(int uid, String target) throws IOException {
        Relay relay = new Relay(uid, target, dir);
        relays.add(relay);
        return relay;
    }

    /** A TCP relay to the controller, running as {@code uid}: its connections to the switch are that user's. */
    private static final class Relay implements AutoCloseable {
        final Process process;
        final int port;

        Relay(int uid, String target, Path dir) throws IOException {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            process = new ProcessBuilder("/usr/bin/setpriv", "--reuid=" + uid, "--regid=" + uid, "--clear-groups",
                    java, "-XX:-UsePerfData", "-Xmx64m", "-XX:TieredStopAtLevel=1", "Relay.java",
                    target).directory(dir.toFile()).redirectErrorStream(true).start();
            BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
                try {
                    String line;
                    StringBuilder said = new StringBuilder();
                    while ((line = out.readLine()) != null) {
                        if (line.startsWith("PORT ")) {
                            return line;
                        }
                        said.append(line).append('\n');
                    }
                    return said.toString();
                } catch (IOException e) {
                    return e.toString();
                }
            });
            String line;
            try {
                line = first.get(60, TimeUnit.SECONDS);
            } catch (Exception e) {
                process.destroyForcibly();
                throw new IOException("the relay as uid " + uid + " did not start within 60 s", e);
            }
            if (!line.startsWith("PORT ")) {
                process.destroyForcibly();
                throw new IOException("the relay as uid " + uid + " did not start: " + line);
            }
            port = Integer.parseInt(line.substring(5).trim());
        }

        @Override
        public void close() {
            try {
                process.getOutputStream().close();
            } catch (IOException e) {
                // it is going anyway
            }
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
