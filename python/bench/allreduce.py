"""All-reduce time of one tensor the size of the Fashion-MNIST MLP's gradients (235 146 float32, DDP's one
bucket), on the process group's backend, with no training around it: where DDP's per-step aggregation time
goes. Run under a launcher, e.g. `switchml torchrun --workers 4 python/bench/allreduce.py switchml` (or gloo;
add --rack --rate 1gbit before the script for the emulated rack). Rank 0 prints the median and the 10th and
90th percentiles over the timed calls, after warm-up calls; every call sums the same input, so the result
never overflows."""

import argparse

import torch
import torch.distributed as dist

import switchml_torch  # noqa: F401 (registers the switchml backend)
from collective_timing import finish, summary, time_in_turns

ap = argparse.ArgumentParser(description=__doc__)
ap.add_argument("backend", choices=["switchml", "gloo"])
ap.add_argument("--elements", type=int, default=235146)
ap.add_argument("--warmup", type=int, default=30)
ap.add_argument("--iters", type=int, default=200)
args = ap.parse_args()

dist.init_process_group(args.backend)
base = torch.randn(args.elements, generator=torch.Generator().manual_seed(dist.get_rank()))
t = base.clone()
times = time_in_turns({args.backend: (lambda: t.copy_(base), lambda: dist.all_reduce(t))}, args.warmup, args.iters)
if dist.get_rank() == 0:
    print("%s: %d ranks, %d float32: %s" % (args.backend, dist.get_world_size(), args.elements,
                                            summary(times[args.backend])), flush=True)
finish()
