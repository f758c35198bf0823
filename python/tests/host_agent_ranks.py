"""Run by test_torchrun.py under `switchml torchrun --workers N host_agent_ranks.py`: every rank of this host shares
one agent (one agent process for the job, every rank attached to it), all-reduces through it are exact for every
rank, and DDP trains to identical parameters; every rank prints "rank R ok"."""

import os

import torch
import torch.distributed as dist

import switchml_torch
from toy_ddp import digest, model as toy_model, train

dist.init_process_group("switchml")
rank, world = dist.get_rank(), dist.get_world_size()
group = dist.distributed_c10d._get_default_group()
agent = group.agent
assert agent.local_ranks == list(range(world)), agent.local_ranks
assert (agent._process is not None) == (rank == 0), "only the host's first rank starts the agent"


def agents_of(job):
    """The agent processes on this machine serving ``job``."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                args = f.read().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        if "--local-ranks" in args and "--job" in args and args[args.index("--job") + 1] == job:
            found.append((pid, args[args.index("--local-ranks") + 1], args[args.index("--workers") + 1]))
    return found


found = agents_of(group.job)
assert len(found) == 1, found
assert found[0][1] == ",".join(str(r) for r in range(world)) and found[0][2] == "1", found

# Sums and means over the launch's ranks, exact (small integers), several in flight, floats and ints.
works = []
for n in (1, 777, 70000):
    f = torch.full((n,), float(rank + 1))
    i = torch.arange(n, dtype=torch.int32) * (rank + 1)
    m = torch.full((n,), float(2 * (rank + 1)))
    works.append((n, f, i, m, dist.all_reduce(f, async_op=True), dist.all_reduce(i, async_op=True),
                  dist.all_reduce(m, op=dist.ReduceOp.AVG, async_op=True)))
total = sum(r + 1 for r in range(world))
for n, f, i, m, *pending in works:
    for w in pending:
        w.wait()
    assert torch.all(f == total), (n, f[:4])
    assert torch.equal(i, torch.arange(n, dtype=torch.int32) * total), (n, i[:4])
    assert torch.all(m == 2 * total / world), (n, m[:4])

torch.manual_seed(rank)  # different data on every rank; DDP starts all from rank 0's parameters
model = toy_model()
train(model, 5)
digests = [None] * world
dist.all_gather_object(digests, digest(model))
assert len(set(digests)) == 1, digests
group.close()
print("rank %d ok" % rank, flush=True)
# Gloo's teardown at interpreter exit (1.13) sometimes hangs after all work is done.
os._exit(0)
