"""Run by test_backend.py under `switchml torchrun --workers 2 backend_ranks.py --epochs 1 -x --name "a b"`:
the switchml process group's collectives for every dtype and sparse tensors, DDP on it with no hook, and DDP with
float16 and bfloat16 parameters through the comm hook; every rank prints "rank R ok"."""

import os
import sys

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

import switchml_torch
from toy_ddp import digest, model as toy_model

# Everything after the script reached it, options included.
assert sys.argv[1:] == ["--epochs", "1", "-x", "--name", "a b"], sys.argv

dist.init_process_group("switchml")
assert dist.get_backend() == "switchml", dist.get_backend()
rank, world = dist.get_rank(), dist.get_world_size()
group = dist.distributed_c10d._get_default_group()
ranks_sum = sum(r + 1 for r in range(world))

# all_reduce: SUM and AVG through the switch, every dtype the backend converts, MIN/MAX through Gloo.
for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32, torch.int64, torch.int16,
              torch.int8, torch.uint8):
    t = torch.full((1000,), rank + 1, dtype=dtype)
    dist.all_reduce(t)
    assert t.dtype == dtype and torch.all(t == ranks_sum), (dtype, t[:4])
    t = torch.full((7,), 2 * (rank + 1), dtype=dtype)
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert torch.all(t == ranks_sum * 2 // world), (dtype, "avg", t)
    t = torch.full((3,), rank + 1, dtype=dtype)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    assert torch.all(t == world), (dtype, "max", t)
# int64 beyond int32, negative values included: exact.
big = torch.tensor([2 ** 40 + rank, -(2 ** 50) - 3 * rank, 7, -1, 2 ** 62 // world], dtype=torch.int64)
expected = sum(torch.tensor([2 ** 40 + r, -(2 ** 50) - 3 * r, 7, -1, 2 ** 62 // world], dtype=torch.int64) for r in range(world))
dist.all_reduce(big)
assert torch.equal(big, expected), (big, expected)
# A non-contiguous tensor (a transposed view) is reduced in place through its strides.
base = torch.arange(12, dtype=torch.float32).reshape(3, 4) * (rank + 1)
view = base.t()
assert not view.is_contiguous()
dist.all_reduce(view)
assert torch.equal(base, torch.arange(12, dtype=torch.float32).reshape(3, 4) * ranks_sum), base
# Several tensors in flight, asynchronously.
works = [dist.all_reduce(torch.full((n,), 1.0), async_op=True) for n in (10, 5000, 1)]
for w in works:
    w.wait()
# A sparse tensor (each rank its own rows, as in PyTorch's test_sparse_all_reduce_sum): summed dense through the
# switch, written back sparse, equal to the coalesced sum of every rank's.
def sparse_of(r):
    return torch.sparse_coo_tensor([[r, r + 1, 7]], [float(r + 1), 2.0, 3.0 * (r + 1)], (10,))


mine = sparse_of(rank)
dist.all_reduce(mine)
assert mine.is_sparse, mine
assert torch.equal(mine.to_dense(), sum(sparse_of(r).to_dense() for r in range(world))), mine
# What the switch cannot add is refused, saying what is supported.
try:
    dist.all_reduce(torch.ones(3, dtype=torch.bool))
    raise AssertionError("bool all_reduce should have been refused")
except TypeError as e:
    assert "float32" in str(e) and "bool" in str(e), e

# The rest through Gloo.
t = torch.full((3,), float(rank))
dist.broadcast(t, src=world - 1)
assert torch.all(t == world - 1), t
outs = [torch.zeros(2) for _ in range(world)]
dist.all_gather(outs, torch.full((2,), float(rank)))
assert all(torch.all(o == r) for r, o in enumerate(outs)), outs
gathered = torch.zeros(2 * world)
dist.all_gather_into_tensor(gathered, torch.full((2,), float(rank)))
assert torch.equal(gathered, torch.arange(world, dtype=torch.float32).repeat_interleave(2)), gathered
objects = [None] * world
dist.all_gather_object(objects, {"rank": rank})
assert objects == [{"rank": r} for r in range(world)], objects
# reduce_scatter: through the switch.
out = torch.zeros(2)
dist.reduce_scatter(out, [torch.full((2,), float(i + 10 * rank)) for i in range(world)])
assert torch.all(out == rank * world + 10 * sum(range(world))), out
out = torch.zeros(3, dtype=torch.int64)
dist.reduce_scatter_tensor(out, torch.arange(3 * world, dtype=torch.int64) + rank)
assert torch.equal(out, (torch.arange(3) + 3 * rank) * world + sum(range(world))), out
dist.barrier()


def identical(model):
    digests = [None] * world
    dist.all_gather_object(digests, digest(model))
    return len(set(digests)) == 1


# DDP with the backend and no hook: DDP's own all-reduce through the switch.
torch.manual_seed(rank)  # different initial parameters and data: DDP starts all from rank 0's
model = toy_model()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x, y = torch.randn(64, 20), torch.randint(0, 3, (64,))
losses = []
for step in range(20):
    loss = nn.functional.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
assert identical(model), "DDP (no hook) ranks differ"
assert losses[-1] < losses[0], losses


class HalfLinear(nn.Module):
    """Parameters in float16 or bfloat16 (so are their gradients and DDP's buckets), computed in float32,
    since PyTorch 1.13 has no float16 matmul on CPU."""

    def __init__(self, n_in, n_out, dtype):
        super().__init__()
        self.weight = nn.Parameter((torch.randn(n_out, n_in) / n_in ** 0.5).to(dtype))
        self.bias = nn.Parameter(torch.zeros(n_out, dtype=dtype))

    def forward(self, x):
        return x @ self.weight.float().t() + self.bias.float()


for dtype in (torch.float16, torch.bfloat16):
    torch.manual_seed(rank)
    model = DistributedDataParallel(nn.Sequential(HalfLinear(20, 32, dtype), nn.ReLU(), HalfLinear(32, 3, dtype)),
                                    bucket_cap_mb=0.001)
    model.register_comm_hook(group.agent, switchml_torch.allreduce_hook)  # the backend's agent serves the hook too
    before = digest(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(5):
        loss = nn.functional.cross_entropy(model(torch.randn(32, 20)), torch.randint(0, 3, (32,)))
        optimizer.zero_grad()
        loss.backward()
        assert all(p.grad.dtype == dtype for p in model.parameters())
        optimizer.step()
    assert identical(model), "%s hook ranks differ" % dtype
    assert digest(model) != before and all(torch.isfinite(p.float()).all() for p in model.parameters())

dist.barrier()
print("rank %d ok" % rank, flush=True)
# Gloo's teardown at interpreter exit (1.13) sometimes hangs after all work is done; the agent leaves at atexit,
# which os._exit skips, so close it first.
group.close()
os._exit(0)
