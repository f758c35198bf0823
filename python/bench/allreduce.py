"""All-reduce time of one tensor the size of the Fashion-MNIST MLP's gradients (235 146 float32, DDP's one
bucket), on the process group's backend, with no training around it: where DDP's per-step aggregation time
goes. Run under a launcher, e.g. `switchml torchrun --workers 4 python/bench/allreduce.py switchml` (or gloo;
add --rack --rate 1gbit before the script for the emulated rack). Rank 0 prints the median and the 10th and
90th percentiles over the timed calls, after warm-up calls; every call sums the same input, so the result
never overflows."""

import argparse
import os
import time

import torch
import torch.distributed as dist

import switchml_torch  # noqa: F401 (registers the switchml backend)

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("backend", choices=["switchml", "gloo"])
ap.add_argument("--elements", type=int, default=235146)
ap.add_argument("--warmup", type=int, default=30)
ap.add_argument("--iters", type=int, default=200)
args = ap.parse_args()

dist.init_process_group(args.backend)
base = torch.randn(args.elements, generator=torch.Generator().manual_seed(dist.get_rank()))
t = base.clone()
times = []
for i in range(args.warmup + args.iters):
    t.copy_(base)
    start = time.monotonic()
    dist.all_reduce(t)
    if i >= args.warmup:
        times.append(time.monotonic() - start)
times.sort()
if dist.get_rank() == 0:
    pick = lambda q: times[min(len(times) - 1, int(q * len(times)))] * 1e3
    print("%s: %d ranks, %d float32: median %.2f ms, p10 %.2f, p90 %.2f" % (args.backend, dist.get_world_size(),
          args.elements, pick(0.5), pick(0.1), pick(0.9)), flush=True)
dist.barrier()
# Gloo's teardown at interpreter exit (1.13) sometimes hangs after all work is done.
os._exit(0)
