"""Run by test_hosts.py: one rank per host (network namespace) under PyTorch's own torchrun --nnodes 3,
through the switch in a fourth. Trains a few DDP steps on this rank's own data through the switchml
backend and writes what the test compares to OUT/rank-R.json: the job's name, the parameters' digest
before and after training."""

import json
import os
import sys

import torch
import torch.distributed as dist

import switchml_torch
from toy_ddp import digest, model as toy_model, train


out = sys.argv[1]
dist.init_process_group("switchml")
rank = dist.get_rank()
torch.manual_seed(rank)  # different parameters and data on every rank; DDP starts all from rank 0's parameters
model = toy_model()
before = digest(model.module)
train(model, 5)
with open(os.path.join(out, "rank-%d.json" % rank), "w") as f:
    json.dump({"rank": rank, "world": dist.get_world_size(), "job": switchml_torch.backend.job_name(),
               "before": before, "after": digest(model.module)}, f)
dist.barrier()
dist.distributed_c10d._get_default_group().close()  # leaves the job before Gloo's teardown
print("rank %d ok" % rank, flush=True)
# Gloo's teardown at interpreter exit (1.13) sometimes hangs after all work is done.
os._exit(0)
