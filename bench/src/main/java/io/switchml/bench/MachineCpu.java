package io.switchml.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The whole machine's busy CPU time so far, from the first line of {@code /proc/stat}: user, nice, system, irq,
 * softirq and steal time of every CPU, every process and the kernel's packet processing together (idle and iowait
 * left out). The bench's {@code cpu_s} is its difference over the timed all-reduces: what an all-reduce costs the
 * machine, wherever the work ran. /proc/stat counts in USER_HZ ticks, 100 per second on Linux's every architecture
 * that Java runs on.
 */
final class MachineCpu {
    static final Path PROC_STAT = Path.of("/proc/stat");
    private static final long NANOS_PER_TICK = 10_000_000L;

    private MachineCpu() {
    }

    /** Busy CPU nanoseconds of the whole machine so far; -1 where /proc/stat cannot be read (not Linux). */
    static long busyNanos() {
        try {
            return busyNanos(Files.readAllLines(PROC_STAT).get(0));
        } catch (IOException | IndexOutOfBoundsException e) {
            return -1;
        }
    }

    /** The busy nanoseconds that {@code /proc/stat}'s first line ({@code cpu  user nice system idle ...}) says. */
    static long busyNanos(String cpuLine) {
        String[] f = cpuLine.trim().split("\\s+");
        if (f.length < 5 || !f[0].equals("cpu")) {
            throw new IllegalArgumentException("not the first line of /proc/stat: '" + cpuLine + "'");
        }
        long ticks = 0;
        // 1 user, 2 nice, 3 system, (4 idle, 5 iowait,) 6 irq, 7 softirq, 8 steal; guest time is inside user already.
        for (int i : new int[]{1, 2, 3, 6, 7, 8}) {
            if (i < f.length) {
                ticks += Long.parseLong(f[i]);
            }
        }
        return ticks * NANOS_PER_TICK;
    }
}
