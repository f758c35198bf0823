"""What the collective benchmarks run under a launcher (allreduce.py, reduce_scatter.py) share: timing calls after
warm-up calls, several collectives taking turns; the median and percentiles of the times; a link rate written as tc
and `switchml torchrun --rate` take it; and a rank's end."""

import os
import re
import sys
import time

import torch.distributed as dist

_RATE = re.compile(r"([0-9]+(?:\.[0-9]+)?)([kmg]?)(bit|bps)?")


def time_in_turns(calls, warmup, iters):
    """Times ``calls`` (name -> (prepare, call)), taking turns: each round runs every call once, in order, ``prepare``
    (untimed) before its ``call``, so that a load that comes and goes on the machine falls on all of them alike. The
    first ``warmup`` rounds are not timed. Returns name -> the timed calls' seconds, sorted."""
    times = {name: [] for name in calls}
    for i in range(warmup + iters):
        for name, (prepare, call) in calls.items():
            prepare()
            start = time.monotonic()
            call()
            if i >= warmup:
                times[name].append(time.monotonic() - start)
    return {name: sorted(t) for name, t in times.items()}


def quantile_ms(times, q):
    """The q-quantile (0 to 1) of sorted ``times`` in seconds, in milliseconds (the nearest rank below)."""
    return times[min(len(times) - 1, int(q * len(times)))] * 1e3


def summary(times):
    """``median M ms, p10 A, p90 B`` of sorted ``times`` in seconds."""
    return "median %.2f ms, p10 %.2f, p90 %.2f" % (quantile_ms(times, 0.5), quantile_ms(times, 0.1), quantile_ms(times, 0.9))


def parse_rate(text):
    """A link rate as tc writes it (``100mbit``, ``1gbit``, ``100mbps`` = bytes/s, a plain number = bit/s) in bit/s,
    as `switchml torchrun --rate` reads it; a SystemExit saying how to write it otherwise."""
    m = _RATE.fullmatch(text.strip().lower())
    if not m:
        raise SystemExit("cannot read the rate %r; write e.g. 100mbit, 1gbit or 100mbps (bytes/s)" % text)
    value = float(m.group(1)) * {"k": 1e3, "m": 1e6, "g": 1e9, "": 1}[m.group(2)]
    return round(value * 8 if m.group(3) == "bps" else value)


def finish(code=0):
    """Ends this rank once every rank is done, with ``code``: leaves the switch's job where the default group is
    switchml's, then exits without the interpreter's teardown, since Gloo's at exit (1.13) sometimes hangs after all
    work is done (and the group's close at exit would then not run)."""
    dist.barrier()
    group = dist.distributed_c10d._get_default_group()
    if hasattr(group, "agent"):
        group.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
