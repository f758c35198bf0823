"""Run by test_hosts.py: one rank per host (network namespace) under PyTorch's own torchrun --nnodes 3,
through the switch in a fourth. Trains a few DDP steps on this rank's own data through the switchml
backend and writes what the test compares to OUT/rank-R.json: the job's name, the parameters' digest
before and after training."""

import hashlib
import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

import switchml_torch


def digest(model):
    return hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()


out = sys.argv[1]
dist.init_process_group("switchml")
rank = dist.get_rank()
torch.manual_seed(rank)  # different parameters and data on every rank; DDP starts all from rank 0's parameters
model = DistributedDataParallel(nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3)),
                                bucket_cap_mb=0.004)  # several buckets per step
before = digest(model.module)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    loss = nn.functional.cross_entropy(model(torch.randn(32, 20)), torch.randint(0, 3, (32,)))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
with open(os.path.join(out, "rank-%d.json" % rank), "w") as f:
    json.dump({"rank": rank, "world": dist.get_world_size(), "job": switchml_torch.backend.job_name(),
               "before": before, "after": digest(model.module)}, f)
dist.barrier()
dist.distributed_c10d._get_default_group().close()  # leaves the job before Gloo's teardown
print("rank %d ok" % rank, flush=True)
# Gloo's teardown at interpreter exit (1.13) sometimes hangs after all work is done.
os._exit(0)
