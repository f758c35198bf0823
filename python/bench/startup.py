"""Start-up time of a rank, run under `switchml torchrun --workers N python/bench/startup.py MODE`:
MODE agent: init_process_group("gloo"), then start_agent() and a first all-reduce through it;
MODE backend: init_process_group("switchml") (it starts the agent), then a first all_reduce;
MODE gloo: init_process_group("gloo"), then a first all_reduce (the reference).
Rank 0 prints one JSON line: the slowest rank's seconds for each phase."""

import json
import os
import sys
import time

import torch
import torch.distributed as dist

import switchml_torch

mode = sys.argv[1]
t0 = time.monotonic()
if mode == "agent":
    dist.init_process_group("gloo")
    t1 = time.monotonic()
    agent = switchml_torch.start_agent()
    t2 = time.monotonic()
    agent.allreduce_async(torch.ones(1), op="sum").wait()
else:
    dist.init_process_group("switchml" if mode == "backend" else "gloo")
    t1 = t2 = time.monotonic()
    dist.all_reduce(torch.ones(1))
t3 = time.monotonic()
for _ in range(10):  # the next ones, for comparison
    if mode == "agent":
        agent.allreduce_async(torch.ones(1), op="sum").wait()
    else:
        dist.all_reduce(torch.ones(1))
t4 = time.monotonic()
phases = {"init_process_group_s": t1 - t0, "start_agent_s": t2 - t1, "first_allreduce_s": t3 - t2,
          "start_agent_to_first_allreduce_s": t3 - t1, "init_to_first_allreduce_s": t3 - t0,
          "next_allreduce_mean_s": (t4 - t3) / 10}
gathered = [None] * dist.get_world_size()
dist.all_gather_object(gathered, phases)
if dist.get_rank() == 0:
    print(json.dumps({"mode": mode, **{k: round(max(g[k] for g in gathered), 3) for k in phases}}), flush=True)
if mode == "agent":
    agent.close()
elif isinstance(dist.distributed_c10d._get_default_group(), switchml_torch.SwitchMLProcessGroup):
    dist.distributed_c10d._get_default_group().close()
dist.barrier()
os._exit(0)
