"""Run by test_backend.py under `switchml torchrun --workers 2 backend_ranks.py --epochs 1 -x --name "a b"`:
the switchml process group's collectives for every dtype and sparse tensors, every public collective reaching the
group (under PyTorch 1.13's names or 2.x's) with exact results, DDP on it with no hook, and DDP with
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

# Every public collective reaches the group, under 1.13's names or 2.x's, with exact results; SUM and AVG
# reductions through the switch (the agent), the rest through Gloo.
TORCH2 = int(torch.__version__.split(".")[0]) >= 2
served = {"methods": set(), "switched": 0}


def _counted(name, method):
    def call(*args, **kwargs):
        served["methods"].add(name)
        return method(*args, **kwargs)
    return call


COLLECTIVES = [n for n in vars(type(group)) if not n.startswith("__") and n not in ("close", "getBackendName", "name",
                                                                                     "_get_backend_name", "_agent_op")]
for name in COLLECTIVES:
    setattr(group, name, _counted(name, getattr(group, name)))
_allreduce_async = group.agent.allreduce_async


def _switched(*args, **kwargs):
    served["switched"] += 1
    return _allreduce_async(*args, **kwargs)


group.agent.allreduce_async = _switched


def check(what, names, switch, call):
    """Runs ``call``; one of ``names`` (the group's methods) served it, through the switch or not."""
    served["methods"].clear()
    served["switched"] = 0
    call()
    assert served["methods"] & set(names), (what, "reached", sorted(served["methods"]), "not", names)
    assert (served["switched"] > 0) == switch, (what, "switch" if switch else "Gloo", served)


def all_reduce():
    t = torch.full((5,), float(rank + 1))
    dist.all_reduce(t)
    assert torch.equal(t, torch.full((5,), float(ranks_sum))), t


def all_reduce_max():
    t = torch.full((5,), rank + 1, dtype=torch.int64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    assert torch.equal(t, torch.full((5,), world, dtype=torch.int64)), t


def all_reduce_coalesced():
    ts = [torch.full((3,), float(rank + 1)), torch.full((1000,), 2.0 * (rank + 1))]  # one dtype, as torch requires
    dist.all_reduce_coalesced(ts)
    assert torch.equal(ts[0], torch.full((3,), float(ranks_sum))), ts[0]
    assert torch.equal(ts[1], torch.full((1000,), 2.0 * ranks_sum)), ts[1]


def reduce_scatter():
    out = torch.zeros(2)
    dist.reduce_scatter(out, [torch.full((2,), float(i + 10 * rank)) for i in range(world)])
    assert torch.all(out == rank * world + 10 * sum(range(world))), out


def reduce_scatter_tensor():
    out = torch.zeros(3, dtype=torch.int64)
    dist.reduce_scatter_tensor(out, torch.arange(3 * world, dtype=torch.int64) + rank)
    assert torch.equal(out, (torch.arange(3) + 3 * rank) * world + sum(range(world))), out


def all_gather():
    outs = [torch.zeros(2) for _ in range(world)]
    dist.all_gather(outs, torch.full((2,), float(rank)))
    assert all(torch.all(o == r) for r, o in enumerate(outs)), outs


def all_gather_into_tensor():
    gathered = torch.zeros(2 * world)
    dist.all_gather_into_tensor(gathered, torch.full((2,), float(rank)))
    assert torch.equal(gathered, torch.arange(world, dtype=torch.float32).repeat_interleave(2)), gathered


def all_to_all_single():
    # Rank r sends its i-th pair of elements, 100 r + (2 i, 2 i + 1), to rank i.
    out = torch.zeros(2 * world, dtype=torch.int64)
    dist.all_to_all_single(out, torch.arange(2 * world, dtype=torch.int64) + 100 * rank)
    expected = torch.cat([torch.tensor([2 * rank, 2 * rank + 1]) + 100 * r for r in range(world)])
    assert torch.equal(out, expected), (out, expected)


def broadcast():
    t = torch.full((3,), float(rank))
    dist.broadcast(t, src=world - 1)
    assert torch.all(t == world - 1), t


def send_recv():
    # Each rank sends its rank to the next and receives the previous one's.
    sent = dist.isend(torch.full((4,), rank + 1, dtype=torch.int32), dst=(rank + 1) % world)
    got = torch.zeros(4, dtype=torch.int32)
    dist.recv(got, src=(rank - 1) % world)
    sent.wait()
    assert torch.equal(got, torch.full((4,), (rank - 1) % world + 1, dtype=torch.int32)), got


check("all_reduce", ["allreduce"], True, all_reduce)
check("all_reduce MAX", ["allreduce"], False, all_reduce_max)
check("all_reduce_coalesced", ["allreduce_coalesced"], True, all_reduce_coalesced)
check("reduce_scatter", ["reduce_scatter"], True, reduce_scatter)
check("reduce_scatter_tensor", ["_reduce_scatter_base", "reduce_scatter_single"], True, reduce_scatter_tensor)
check("all_gather", ["allgather"], False, all_gather)
check("all_gather_into_tensor", ["_allgather_base", "all_gather_single"], False, all_gather_into_tensor)
check("all_to_all_single", ["alltoall_base", "all_to_all_single"], False, all_to_all_single)
check("broadcast", ["broadcast"], False, broadcast)
check("barrier", ["barrier"], False, dist.barrier)
check("send/recv", ["send"], False, send_recv)
assert "recv" in served["methods"], served
if TORCH2:
    # 2.x: several of a kind at once (the coalescing manager), and the functional collectives FSDP2 and DTensor use.
    import torch.distributed._functional_collectives as funcol

    def coalesced_reduce_scatter_tensors():
        outs = [torch.zeros(3, dtype=torch.int64), torch.zeros(1)]
        with dist._coalescing_manager():
            dist.reduce_scatter_tensor(outs[0], torch.arange(3 * world, dtype=torch.int64) + rank)
            dist.reduce_scatter_tensor(outs[1], torch.full((world,), float(rank)))
        assert torch.equal(outs[0], (torch.arange(3) + 3 * rank) * world + sum(range(world))), outs
        assert torch.equal(outs[1], torch.tensor([float(sum(range(world)))])), outs

    def coalesced_all_gathers_into_tensors():
        outs = [torch.zeros(2 * world), torch.zeros(world, dtype=torch.int64)]
        with dist._coalescing_manager():
            dist.all_gather_into_tensor(outs[0], torch.full((2,), float(rank)))
            dist.all_gather_into_tensor(outs[1], torch.tensor([rank]))
        assert torch.equal(outs[0], torch.arange(world, dtype=torch.float32).repeat_interleave(2)), outs
        assert torch.equal(outs[1], torch.arange(world)), outs

    def functional_all_reduce():
        t = funcol.all_reduce(torch.full((4,), float(rank + 1)), "sum", group).wait()
        assert torch.equal(t, torch.full((4,), float(ranks_sum))), t

    def functional_reduce_scatter_tensor():
        t = funcol.reduce_scatter_tensor(torch.arange(2 * world, dtype=torch.float32) + rank, "sum", 0, group).wait()
        assert torch.equal(t, (torch.arange(2, dtype=torch.float32) + 2 * rank) * world + sum(range(world))), t

    def functional_all_gather_tensor():
        t = funcol.all_gather_tensor(torch.full((2,), float(rank)), 0, group).wait()
        assert torch.equal(t, torch.arange(world, dtype=torch.float32).repeat_interleave(2)), t

    check("coalesced reduce_scatter_tensor", ["reduce_scatter_single_coalesced", "reduce_scatter_tensor_coalesced"],
          True, coalesced_reduce_scatter_tensors)
    check("coalesced all_gather_into_tensor", ["all_gather_single_coalesced", "allgather_into_tensor_coalesced"],
          False, coalesced_all_gathers_into_tensors)
    check("functional all_reduce", ["allreduce"], True, functional_all_reduce)
    check("functional reduce_scatter_tensor", ["reduce_scatter_single_coalesced", "reduce_scatter_tensor_coalesced"],
          True, functional_reduce_scatter_tensor)
    functional_all_gather_tensor()  # through the group's Gloo, its CPU backend: not one of the group's methods
# The group's own methods again (DDP below calls them from C++).
for name in COLLECTIVES:
    delattr(group, name)
del group.agent.allreduce_async
objects = [None] * world
dist.all_gather_object(objects, {"rank": rank})
assert objects == [{"rank": r} for r in range(world)], objects
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
