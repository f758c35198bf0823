package io.switchml.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The system calls a benchmark worker counts over its timed all-reduces ({@code bench --syscalls}): its own
 * process's, and on rank 0 the switch's processes' as well. Counts nothing, and costs nothing, where the plan
 * does not ask for it.
 */
final class TimedSyscalls implements AutoCloseable {
    private final SyscallCounter self;
    private final List<SyscallCounter> switches = new ArrayList<>();
    private long worker = -1;
    private long switchSide = -1;

    private TimedSyscalls(WorkerPlan plan, int rank) {
        if (!plan.syscalls()) {
            self = null;
            return;
        }
        self = SyscallCounter.attach(ProcessHandle.current().pid());
        try {
            if (rank == 0) {
                for (long pid : plan.switchPids()) {
                    switches.add(SyscallCounter.attach(pid));
                }
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Attaches the counters the plan asks this rank for; none when it asks for none. */
    static TimedSyscalls of(WorkerPlan plan, int rank) {
        return new TimedSyscalls(plan, rank);
    }

    void start() {
        if (self != null) {
            self.start();
            switches.forEach(SyscallCounter::start);
        }
    }

    void stop() {
        if (self != null) {
            worker = self.stop();
            if (!switches.isEmpty()) {
                long sum = 0;
                for (SyscallCounter c : switches) {
                    sum += c.stop();
                }
                switchSide = sum;
            }
        }
    }

    /** This worker's system calls between start and stop; -1 when not counted. */
    long worker() {
        return worker;
    }

    /** The switch's processes' system calls between start and stop; -1 when not counted. */
    long switchSide() {
        return switchSide;
    }

    @Override
    public void close() {
        if (self != null) {
            self.close();
        }
        switches.forEach(SyscallCounter::close);
    }
}
