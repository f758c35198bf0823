package io.switchml.controller;

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.switchml.controller.proto.BarrierRequest;
import io.switchml.controller.proto.BroadcastRequest;
import io.switchml.controller.proto.ControllerGrpc;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.controller.proto.JoinResponse;
import io.switchml.controller.proto.LeaveRequest;
import io.switchml.dataplane.SwitchConfig;
import io.switchml.protocol.AggregationPacket;
import io.switchml.protocol.PayloadSize;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;

/**
 * Starts a real {@link AggregationService} on loopback (free ports) for every test and talks to it
 * over gRPC, as workers do. Calls that block (join, barrier, broadcast) run on a thread pool so that
 * several ranks can wait at once.
 */
abstract class ControllerTestSupport {
    /** Generous client-side deadline: the server's own timeouts are what the tests observe. */
    static final long CLIENT_DEADLINE_MS = 20_000;
    static final int LONG_TIMEOUT_MS = 10_000;
    static final String LOOPBACK = "127.0.0.1";

    AggregationService service;
    ManagedChannel channel;
    ExecutorService pool;

    @BeforeEach
    void startService() {
        // The tests' own calls come from the switch's own user, whom a default switch takes for its operator (who may
        // end any job); the tests of strangers' calls need them to be strangers, so only those that say so get it.
        // The tests give their ranks made-up UDP ports (isFakeWorkerPort); a join naming one of the switch's own is
        // refused (JoinValidator), so a switch whose free ports land there is started again.
        for (int attempt = 0; ; attempt++) {
            service = AggregationService.start(new SwitchConfig().bindAddress(LOOPBACK).basePort(0).allowFaultInjection(true),
                    LOOPBACK, 0, security().localOperators(localOperators()));
            boolean clash = isFakeWorkerPort(service.controllerPort());
            for (int port : service.dataplane().ports()) {
                clash |= isFakeWorkerPort(port);
            }
            if (!clash || attempt == 20) {
                break;
            }
            service.close();
        }
        channel = ManagedChannelBuilder.forAddress(LOOPBACK, service.controllerPort()).usePlaintext().build();
        pool = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "test-rank");
            t.setDaemon(true);
            return t;
        });
    }

    /** The tests' made-up worker ports lie in [40 000, 48 000), inside Linux's range of free ports. */
    private static boolean isFakeWorkerPort(int port) {
        return port >= 40_000 && port < 48_000;
    }

    /** Whether the switch's own user (these tests' calls) is the operator; false unless a test class says so. */
    boolean localOperators() {
        return false;
    }

    /** The tenant of these tests' calls: this process's user, as the kernel's socket table shows it. */
    static String selfTenant() {
        return LocalUsers.tenant(LocalUsers.self());
    }

    /** The controller's security for the tests of a class; the defaults unless it says otherwise. */
    ControllerSecurity security() {
        return new ControllerSecurity();
    }

    @AfterEach
    void stopService() throws InterruptedException {
        if (channel != null) {
            channel.shutdownNow();
            channel.awaitTermination(5, TimeUnit.SECONDS);
        }
        if (service != null) {
            service.close();
        }
        if (pool != null) {
            pool.shutdownNow();
            pool.awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    ControllerGrpc.ControllerBlockingStub stub() {
        return ControllerGrpc.newBlockingStub(channel).withDeadlineAfter(CLIENT_DEADLINE_MS, TimeUnit.MILLISECONDS);
    }

    /** A stub whose calls present {@code operatorToken} and {@code jobSecret}, each where not null. */
    ControllerGrpc.ControllerBlockingStub as(String operatorToken, String jobSecret) {
        return withCredentials(stub(), operatorToken, jobSecret);
    }

    /** {@code stub} presenting {@code operatorToken} and {@code jobSecret}, each where not null. */
    static ControllerGrpc.ControllerBlockingStub withCredentials(ControllerGrpc.ControllerBlockingStub stub,
                                                                 String operatorToken, String jobSecret) {
        Metadata headers = new Metadata();
        if (operatorToken != null) {
            headers.put(ControllerAuthenticator.AUTHORIZATION, "Bearer " + operatorToken);
        }
        if (jobSecret != null) {
            headers.put(ControllerAuthenticator.JOB_SECRET, jobSecret);
        }
        return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers));
    }

    /** A join that presents {@code secret} (none where null). */
    CompletableFuture<JoinResponse> joinAs(String secret, JoinRequest request) {
        return async(() -> as(null, secret).withDeadlineAfter(CLIENT_DEADLINE_MS, TimeUnit.MILLISECONDS).join(request))
                .thenApply(ControllerTestSupport::remember);
    }

    static JobParameters params(int workers) {
        return params(workers, 1);
    }

    static JobParameters params(int workers, int threads) {
        return JobParameters.newBuilder().setNumWorkers(workers).setElementsPerPacket(64).setSlotsPerThread(8)
                .setThreads(threads).build();
    }

    /** Rank r of a job uses UDP ports base + 10 r, base + 10 r + 1, ... (one per thread). */
    static JoinRequest.Builder joinRequest(String job, int rank, JobParameters parameters, int basePort) {
        JoinRequest.Builder b = JoinRequest.newBuilder().setJobName(job).setRank(rank).setParameters(parameters)
                .setAddress(LOOPBACK).setTimeoutMs(LONG_TIMEOUT_MS);
        for (int t = 0; t < parameters.getThreads(); t++) {
            b.addPorts(basePort + 10 * rank + t);
        }
        return b;
    }

    static JoinRequest joinRequest(String job, int rank, int workers) {
        return joinRequest(job, rank, params(workers), 40_000).build();
    }

    <T> CompletableFuture<T> async(Supplier<T> call) {
        return CompletableFuture.supplyAsync(call, pool);
    }

    CompletableFuture<JoinResponse> joinAsync(JoinRequest request) {
        return async(() -> remember(stub().join(request)));
    }

    /**
     * The job id each job number's last join returned: the members' credential, which {@link #leave},
     * {@link #barrier} and {@link #broadcast} present as the job's ranks do. Tests run one after another.
     */
    private static final Map<Integer, Long> JOB_IDS = new ConcurrentHashMap<>();

    static JoinResponse remember(JoinResponse joined) {
        JOB_IDS.put(joined.getJobNumber(), joined.getJobId());
        return joined;
    }

    /** The id the last join of job number {@code job} returned (0 if none did). */
    static long jobId(int job) {
        return JOB_IDS.getOrDefault(job, 0L);
    }

    /** Joins every request concurrently and returns the answers in request order. */
    List<JoinResponse> joinAll(List<JoinRequest> requests) {
        List<CompletableFuture<JoinResponse>> futures = new ArrayList<>();
        for (JoinRequest r : requests) {
            futures.add(joinAsync(r));
        }
        List<JoinResponse> responses = new ArrayList<>();
        for (CompletableFuture<JoinResponse> f : futures) {
            responses.add(get(f));
        }
        return responses;
    }

    /** Forms a job of {@code workers} ranks and returns its job number. */
    int formJob(String job, int workers, int basePort) {
        List<JoinRequest> requests = new ArrayList<>();
        for (int r = 0; r < workers; r++) {
            requests.add(joinRequest(job, r, params(workers), basePort).build());
        }
        List<JoinResponse> responses = joinAll(requests);
        int number = responses.get(0).getJobNumber();
        assertThat(responses).allSatisfy(resp -> assertThat(resp.getJobNumber()).isEqualTo(number));
        return number;
    }

    static BarrierRequest barrier(int job, int rank, long sequence, int timeoutMs) {
        return BarrierRequest.newBuilder().setJobNumber(job).setJobId(jobId(job)).setRank(rank).setSequence(sequence).setTimeoutMs(timeoutMs)
                .build();
    }

    static BroadcastRequest broadcast(int job, int rank, int root, long sequence, String value, int timeoutMs) {
        return BroadcastRequest.newBuilder().setJobNumber(job).setJobId(jobId(job)).setRank(rank).setRoot(root).setSequence(sequence)
                .setValue(com.google.protobuf.ByteString.copyFromUtf8(value)).setTimeoutMs(timeoutMs).build();
    }

    static LeaveRequest leave(int job, int rank) {
        return LeaveRequest.newBuilder().setJobNumber(job).setJobId(jobId(job)).setRank(rank).build();
    }

    static <T> T get(Future<T> future) {
        try {
            return future.get(CLIENT_DEADLINE_MS + 5_000, TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            throw new AssertionError("call failed: " + e.getCause(), e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            throw new AssertionError("call did not finish", e);
        }
    }

    /** The status a call that must fail ended with. */
    static Status failure(Future<?> future) {
        try {
            Object value = future.get(CLIENT_DEADLINE_MS + 5_000, TimeUnit.MILLISECONDS);
            return fail("expected the call to fail, but it answered " + value);
        } catch (ExecutionException e) {
            return statusOf(e.getCause());
        } catch (InterruptedException | TimeoutException e) {
            throw new AssertionError("call did not finish", e);
        }
    }

    static Status statusOf(Throwable t) {
        Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
        assertThat(cause).isInstanceOf(StatusRuntimeException.class);
        return ((StatusRuntimeException) cause).getStatus();
    }

    /** Runs a call that must fail at once with {@code code}, and returns the description. */
    static String assertFails(Runnable call, Status.Code code, String... fragments) {
        Status[] status = new Status[1];
        assertThatThrownBy(call::run).isInstanceOfSatisfying(StatusRuntimeException.class, e -> status[0] = e.getStatus());
        return assertStatus(status[0], code, fragments);
    }

    static String assertStatus(Status status, Status.Code code, String... fragments) {
        assertThat(status.getCode()).as("status code of %s", status).isEqualTo(code);
        assertThat(status.getDescription()).as("description of %s", status).isNotNull().contains(fragments);
        return status.getDescription();
    }

    /** Waits for whichever of two calls finishes first; the other one is still parked. */
    static int firstToFinish(CompletableFuture<?> a, CompletableFuture<?> b) {
        try {
            CompletableFuture.anyOf(a, b).handle((v, e) -> null).get(CLIENT_DEADLINE_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException | ExecutionException | TimeoutException e) {
            throw new AssertionError("neither call finished", e);
        }
        assertThat(a.isDone() && b.isDone()).as("only one of the two calls may have finished").isFalse();
        return a.isDone() ? 0 : 1;
    }

    /** The ranks listed in "ranks [a, b] are not there ..." of a timeout's description. */
    static List<Integer> missingRanks(String description) {
        Matcher m = Pattern.compile("ranks \\[([0-9, ]*)\\] are not there").matcher(description);
        assertThat(m.find()).as("missing ranks in '%s'", description).isTrue();
        List<Integer> ranks = new ArrayList<>();
        for (String s : m.group(1).split(",\\s*")) {
            ranks.add(Integer.parseInt(s.trim()));
        }
        return ranks;
    }

    /** Sends an aggregation packet (64 elements, all zero) of round {@code tsi} for (slot, set) to the switch. */
    void sendPacket(DatagramSocket from, int jobNumber, int tsi, int slot, int set) throws IOException {
        PayloadSize size = PayloadSize.ofElements(64);
        ByteBuffer buffer = ByteBuffer.allocate(size.packetBytes());
        new AggregationPacket().wrap(buffer, 0).header(size, jobNumber, tsi, slot, set, 0, 0);
        from.send(new DatagramPacket(buffer.array(), buffer.capacity(), InetAddress.getByName(LOOPBACK),
                service.dataplane().ports()[0]));
    }

    /** Waits until the switch's counter reaches {@code atLeast}. */
    void awaitCounter(String name, long atLeast) throws InterruptedException {
        long deadline = System.nanoTime() + CLIENT_DEADLINE_MS * 1_000_000;
        while (service.dataplane().counters().get(name) < atLeast) {
            assertThat(System.nanoTime()).as("counter %s reaches %d", name, atLeast).isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    /** Waits until {@code count} ranks wait for their jobs to form. */
    void awaitPendingJoins(int count) throws InterruptedException {
        long deadline = System.nanoTime() + CLIENT_DEADLINE_MS * 1_000_000;
        while (service.pendingJoins() < count) {
            assertThat(System.nanoTime()).as("%d ranks waiting to join", count).isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    /** Asserts that a parked call stays parked for a while. */
    static void assertStillWaiting(CompletableFuture<?> future, long millis) throws InterruptedException {
        Thread.sleep(millis);
        assertThat(future).as("call still waiting").isNotDone();
    }
}
