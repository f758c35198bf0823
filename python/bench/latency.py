"""One-element all-reduce latency on the switchml backend, after 20 warm-ups: through the backend's agent
directly, through dist.all_reduce, through the process group's allreduce(). Run under
`switchml torchrun --workers 2 python/bench/latency.py`; each rank prints its mean per call."""

import os
import time

import torch
import torch.distributed as dist

import switchml_torch  # noqa: F401 (registers the backend)

dist.init_process_group("switchml")
g = dist.distributed_c10d._get_default_group()
t = torch.ones(1)
for _ in range(20):
    dist.all_reduce(t, op=dist.ReduceOp.AVG)  # AVG: the value stays 1


def bench(name, f, n=100):
    t0 = time.monotonic()
    for _ in range(n):
        f()
    print(dist.get_rank(), name, "%.2f ms" % ((time.monotonic() - t0) / n * 1000), flush=True)


bench("agent direct", lambda: g.agent.allreduce_async(t, "mean").wait())
bench("dist.all_reduce", lambda: dist.all_reduce(t, op=dist.ReduceOp.AVG))
bench("g.allreduce().wait", lambda: g.allreduce([t], dist.AllreduceOptions()).wait())
bench("agent direct", lambda: g.agent.allreduce_async(t, "mean").wait())
g.close()
os._exit(0)
