"""Run by test_torchrun.py under `switchml torchrun --workers 2`: checks the agent's results on
every rank, then trains a few DDP steps with the hook and checks the parameters are identical."""

import os

import torch
import torch.distributed as dist

import switchml_torch
from toy_ddp import digest, model as toy_model, train

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
# A small shared memory, so the tensors in flight wrap around it and wait for room.
agent = switchml_torch.start_agent(shm_bytes=1 << 16)

# Several in flight, of sizes that do not fit together (the last not even alone: it goes in parts): each rank sends
# rank + 1, so the mean is exact.
sizes = [5000, 1, 9000, 16384, 333, 12000, 7, 40000]
tensors = [torch.full((n,), float(rank + 1)) for n in sizes]
futures = [agent.allreduce_async(t, op="mean") for t in tensors]
expected_mean = sum(r + 1 for r in range(world)) / world
for n, f in zip(sizes, futures):
    result = f.wait()
    assert result.shape == (n,) and torch.all(result == expected_mean), (n, result[:4])
ints = torch.arange(1000, dtype=torch.int32) * (rank + 1)
agent.allreduce_async(ints, op="sum").wait()
assert torch.equal(ints, torch.arange(1000, dtype=torch.int32) * sum(r + 1 for r in range(world)))

torch.manual_seed(rank)  # different data on every rank; DDP starts all from rank 0's parameters
model = toy_model()
model.register_comm_hook(agent, switchml_torch.allreduce_hook)
train(model, 5)
digests = [None] * world
dist.all_gather_object(digests, digest(model))
assert len(set(digests)) == 1, digests
agent.close()
dist.barrier()
print("rank %d ok" % rank, flush=True)
# Gloo's teardown at interpreter exit (1.13) sometimes hangs after all work is done.
os._exit(0)
