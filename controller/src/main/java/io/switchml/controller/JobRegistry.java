package io.switchml.controller;

import io.grpc.Status;
import io.switchml.controller.proto.JobParameters;
import io.switchml.controller.proto.JobStatus;
import io.switchml.controller.proto.JoinRequest;
import io.switchml.dataplane.AggregationSwitch;
import io.switchml.dataplane.JobSpec;
import io.switchml.dataplane.WorkerEndpoint;
import io.switchml.protocol.PayloadSize;
import io.switchml.protocol.ProtocolConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The controller's state: jobs by name while they form, by job number once installed in the switch.
 * Every method is synchronized; waits never block a thread, they park a reply until a rendezvous
 * completes or its timer fires.
 */
final class JobRegistry {
    private static final Logger LOG = LoggerFactory.getLogger(JobRegistry.class);

    /** Where a parked request's answer goes. */
    interface Reply<T> {
        void ok(T value);

        void error(ControlException error);
    }

    private final AggregationSwitch dataplane;
    private final ScheduledExecutorService timer;
    private final Map<String, Job> byName = new HashMap<>();
    private final Job[] byNumber = new Job[ProtocolConstants.MAX_JOBS];

    JobRegistry(AggregationSwitch dataplane, ScheduledExecutorService timer) {
        this.dataplane = dataplane;
        this.timer = timer;
    }

    /** Parks the join until every rank has joined; then installs the job and answers its number. */
    synchronized void join(JoinRequest request, Reply<Integer> reply) {
        String problem = JoinValidator.problem(request);
        if (problem != null) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "invalid join request: " + problem));
            return;
        }
        String name = request.getJobName();
        int rank = request.getRank();
        Job job = byName.get(name);
        if (job != null && job.installed()) {
            reply.error(new ControlException(Status.FAILED_PRECONDITION, "job '" + name + "' is already running as job number "
                    + job.number + " with all " + job.workers() + " ranks; a rank cannot join it twice."
                    + " Wait for the job to end (every rank closes its context) or use another job name"));
            return;
        }
        if (job == null) {
            job = new Job(name, request.getParameters());
            byName.put(name, job);
        } else if (!job.parameters.equals(request.getParameters())) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "rank " + rank + " joins job '" + name
                    + "' with parameters {" + describe(request.getParameters()) + "} but the ranks already waiting use {"
                    + describe(job.parameters) + "}; every worker of a job must be configured alike"));
            return;
        }
        if (job.joining.contains(rank)) {
            reply.error(new ControlException(Status.ALREADY_EXISTS, "rank " + rank + " has already joined job '" + name
                    + "'; each rank joins once (is a rank number given to two workers?)"));
            return;
        }
        WorkerEndpoint endpoint = new WorkerEndpoint(JoinValidator.ipv4(request.getAddress()),
                request.getPortsList().stream().mapToInt(Integer::intValue).toArray());
        String clash = endpointClash(job, endpoint);
        if (clash != null) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, clash));
            return;
        }
        Job joining = job;
        Rendezvous.Waiter<WorkerEndpoint> waiter = new Rendezvous.Waiter<>() {
            @Override
            public void released(Map<Integer, WorkerEndpoint> values) {
                reply.ok(joining.number);
            }

            @Override
            public void failed(ControlException error) {
                reply.error(error);
            }
        };
        boolean complete = job.joining.arrive(rank, endpoint, waiter,
                timer.schedule(() -> expireJoin(joining, rank), request.getTimeoutMs(), TimeUnit.MILLISECONDS));
        if (complete) {
            install(job);
        }
    }

    private String endpointClash(Job job, WorkerEndpoint endpoint) {
        for (Map.Entry<Integer, WorkerEndpoint> e : job.joining.values().entrySet()) {
            WorkerEndpoint other = e.getValue();
            if (other.address().equals(endpoint.address())) {
                for (int p : endpoint.ports()) {
                    if (Arrays.stream(other.ports()).anyMatch(q -> q == p)) {
                        return "UDP endpoint " + endpoint.address().getHostAddress() + ":" + p + " is already used by rank "
                                + e.getKey() + " of job '" + job.name + "'";
                    }
                }
            }
        }
        return null;
    }

    private synchronized void expireJoin(Job job, int rank) {
        job.joining.expire(rank, missing -> new ControlException(Status.DEADLINE_EXCEEDED, "job '" + job.name
                + "': rank " + rank + " waited for the other ranks to join, but ranks " + missing
                + " are not there (never joined, or gave up waiting); start every worker with the same job name and number of workers ("
                + job.workers() + ")"));
        if (job.joining.empty() && !job.installed()) {
            byName.remove(job.name, job);
        }
    }

    private void install(Job job) {
        int number = freeJobNumber();
        if (number < 0) {
            job.joining.fail(new ControlException(Status.RESOURCE_EXHAUSTED, "the switch already runs "
                    + ProtocolConstants.MAX_JOBS + " jobs; job '" + job.name + "' cannot be installed"));
            byName.remove(job.name, job);
            return;
        }
        JobParameters p = job.parameters;
        List<WorkerEndpoint> endpoints = new ArrayList<>(job.joining.values().values());
        try {
            dataplane.installJob(new JobSpec(number, job.name, PayloadSize.ofElements(p.getElementsPerPacket()),
                    p.getSlotsPerThread(), p.getThreads(), endpoints));
        } catch (RuntimeException e) {
            job.joining.fail(new ControlException(Status.FAILED_PRECONDITION, "the switch refused job '" + job.name
                    + "': " + e.getMessage()));
            byName.remove(job.name, job);
            return;
        }
        job.number = number;
        // In rank order (Map.copyOf would iterate in an arbitrary order): Status lists the workers by rank.
        job.endpoints = Collections.unmodifiableMap(new TreeMap<>(job.joining.values()));
        byNumber[number] = job;
        LOG.info("job '{}' installed as job number {}: {} workers, {}", job.name, number, job.workers(), describe(p));
        job.joining.release();
    }

    private int freeJobNumber() {
        for (int i = 0; i < byNumber.length; i++) {
            if (byNumber[i] == null) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Parks a barrier (root = -1) or broadcast until every rank has called it with the same sequence
     * number; answers the root's value (empty for a barrier). {@code rootNumber} is a long so that a uint32
     * root of 2^31 or more (a negative int) is not mistaken for the barrier's -1.
     */
    synchronized void meet(int jobNumber, int rank, long sequence, long rootNumber, byte[] value, int timeoutMs,
                           Reply<byte[]> reply) {
        Job job = installedJob(jobNumber, rank, reply);
        if (job == null) {
            return;
        }
        if (rootNumber < -1 || rootNumber >= job.workers()) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "root " + rootNumber + " outside 0.."
                    + (job.workers() - 1)));
            return;
        }
        int root = (int) rootNumber;
        if (timeoutMs < 1 || timeoutMs > JoinValidator.MAX_TIMEOUT_MS) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "timeout_ms " + Integer.toUnsignedString(timeoutMs)
                    + " outside 1.." + JoinValidator.MAX_TIMEOUT_MS));
            return;
        }
        if (!job.left.isEmpty()) {
            // A rank that left can never arrive: fail now rather than at the timeout.
            reply.error(new ControlException(Status.ABORTED, (job.left.size() == 1 ? "rank " + job.left.first()
                    : "ranks " + job.left) + " left job '" + job.name + "' earlier; call #" + sequence
                    + " can never complete"));
            return;
        }
        Job.Meeting meeting = job.meetings.computeIfAbsent(sequence, s -> new Job.Meeting(root, job.workers()));
        String kind = root < 0 ? "barrier" : "broadcast from root " + root;
        if (meeting.root != root) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "rank " + rank + " calls a " + kind + " as call #"
                    + sequence + " of job " + jobNumber + ", but other ranks called "
                    + (meeting.root < 0 ? "a barrier" : "a broadcast from root " + meeting.root)
                    + "; every rank must make the same sequence of barrier and broadcast calls"));
            return;
        }
        if (meeting.rendezvous.contains(rank)) {
            reply.error(new ControlException(Status.ALREADY_EXISTS, "rank " + rank + " is already waiting in call #"
                    + sequence + " of job " + jobNumber));
            return;
        }
        Rendezvous.Waiter<byte[]> waiter = new Rendezvous.Waiter<>() {
            @Override
            public void released(Map<Integer, byte[]> values) {
                reply.ok(root < 0 ? new byte[0] : values.get(root));
            }

            @Override
            public void failed(ControlException error) {
                reply.error(error);
            }
        };
        boolean complete = meeting.rendezvous.arrive(rank, value, waiter,
                timer.schedule(() -> expireMeeting(job, sequence, rank, kind), timeoutMs, TimeUnit.MILLISECONDS));
        if (complete) {
            job.meetings.remove(sequence);
            meeting.rendezvous.release();
        }
    }

    private synchronized void expireMeeting(Job job, long sequence, int rank, String kind) {
        Job.Meeting meeting = job.meetings.get(sequence);
        if (meeting == null) {
            return;
        }
        meeting.rendezvous.expire(rank, missing -> new ControlException(Status.DEADLINE_EXCEEDED, "job '" + job.name
                + "': rank " + rank + " waited in " + kind + " (call #" + sequence + ") but ranks " + missing
                + " are not there (never came, or gave up waiting); they may have died or be making different calls"));
        if (meeting.rendezvous.empty()) {
            job.meetings.remove(sequence);
        }
    }

    /** A rank leaves; once every rank has left, the job is removed from the switch. */
    synchronized void leave(int jobNumber, int rank, Reply<Void> reply) {
        Job job = installedJob(jobNumber, rank, reply);
        if (job == null) {
            return;
        }
        job.left.add(rank);
        ControlException gone = new ControlException(Status.ABORTED, "rank " + rank + " left job '" + job.name
                + "' while this call was waiting");
        job.meetings.values().forEach(m -> m.rendezvous.fail(gone));
        job.meetings.clear();
        if (job.left.size() == job.workers()) {
            dataplane.removeJob(jobNumber);
            byNumber[jobNumber] = null;
            byName.remove(job.name, job);
            LOG.info("job '{}' (job number {}) ended: every rank left", job.name, jobNumber);
        }
        reply.ok(null);
    }

    private <T> Job installedJob(int jobNumber, int rank, Reply<T> reply) {
        // uint32 fields arrive as Java ints: values of 2^31 and above are negative.
        Job job = jobNumber >= 0 && jobNumber < byNumber.length ? byNumber[jobNumber] : null;
        if (job == null) {
            reply.error(new ControlException(Status.NOT_FOUND, "no job number " + Integer.toUnsignedString(jobNumber)
                    + " is running; it has ended, or the switch restarted since it was joined"));
            return null;
        }
        if (rank < 0 || rank >= job.workers()) {
            reply.error(new ControlException(Status.INVALID_ARGUMENT, "rank " + Integer.toUnsignedString(rank)
                    + " outside 0.." + (job.workers() - 1)));
            return null;
        }
        if (job.left.contains(rank)) {
            reply.error(new ControlException(Status.FAILED_PRECONDITION, "rank " + rank + " has already left job '"
                    + job.name + "'"));
            return null;
        }
        return job;
    }

    /** The installed jobs, for inspection. */
    synchronized List<JobStatus> jobs() {
        List<JobStatus> jobs = new ArrayList<>();
        for (Job job : byNumber) {
            if (job != null) {
                JobStatus.Builder b = JobStatus.newBuilder().setJobNumber(job.number).setJobName(job.name)
                        .setParameters(job.parameters);
                job.endpoints.forEach((rank, e) -> b.addWorkers("rank " + rank + " " + e.address().getHostAddress()
                        + " ports " + Arrays.toString(e.ports()) + (job.left.contains(rank) ? " (left)" : "")));
                jobs.add(b.build());
            }
        }
        return jobs;
    }

    static String describe(JobParameters p) {
        return "workers=" + p.getNumWorkers() + ", elementsPerPacket=" + p.getElementsPerPacket()
                + ", slotsPerThread=" + p.getSlotsPerThread() + ", threads=" + p.getThreads();
    }
}
