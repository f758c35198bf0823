"""A Horovod training script whose only change is its import (horovod.torch -> switchml_torch.horovod);
run by test_horovod.py under `switchml torchrun --workers 2`. Every rank prints "rank R ok"."""

import hashlib
import os

import torch
import torch.nn as nn

import switchml_torch.horovod as hvd

hvd.init()
assert hvd.size() == 2 and hvd.local_size() == 2 and hvd.local_rank() == hvd.rank()
r, n = hvd.rank(), hvd.size()

# The collectives: allreduce returns a new tensor (average by default), the _ forms work in place.
t = torch.full((5,), float(r + 1))
assert torch.all(hvd.allreduce(t) == 1.5) and torch.all(t == r + 1)
assert torch.all(hvd.allreduce(t, op=hvd.Sum) == 3) and torch.all(hvd.allreduce(t, average=False) == 3)
assert torch.all(hvd.allreduce(t, op=hvd.Max) == 2)
handles = [hvd.allreduce_async(torch.full((k,), float(r)), op=hvd.Sum) for k in (3, 3000)]
assert all(torch.all(hvd.synchronize(h) == 1) for h in handles)
h = hvd.allreduce_async_(t, op=hvd.Sum)
assert hvd.synchronize(h) is t and torch.all(t == 3)
assert torch.all(hvd.allreduce(torch.full((2,), 1.0, dtype=torch.float16), compression=hvd.Compression.fp16) == 1)
assert torch.all(hvd.broadcast(torch.full((3,), float(r)), root_rank=1) == 1)
gathered = hvd.allgather(torch.full((r + 1, 2), float(r)))  # first dimensions differ between ranks
assert gathered.shape == (3, 2) and gathered[:, 0].tolist() == [0.0, 1.0, 1.0], gathered
assert hvd.broadcast_object({"from": r}, root_rank=1) == {"from": 1}
assert hvd.allgather_object(r) == [0, 1]

# The usual Horovod training loop.
torch.manual_seed(r)  # different initial parameters on each rank, until broadcast_parameters
model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 3))
optimizer = torch.optim.Adam(model.parameters(), lr=0.01 * hvd.size())
optimizer = hvd.DistributedOptimizer(optimizer, named_parameters=model.named_parameters())
hvd.broadcast_parameters(model.state_dict(), root_rank=0)
hvd.broadcast_optimizer_state(optimizer, root_rank=0)
x, y = torch.randn(64, 20), torch.randint(0, 3, (64,))
losses = []
for step in range(15):
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    if step == 3:  # clipping between synchronize and step, as Horovod's docs show
        optimizer.synchronize()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        with optimizer.skip_synchronize():
            optimizer.step()
    else:
        optimizer.step()
    losses.append(hvd.allreduce(loss.detach()).item())
digest = hashlib.sha256(b"".join(p.detach().numpy().tobytes() for p in model.parameters())).hexdigest()
assert len(set(hvd.allgather_object(digest))) == 1, "ranks' parameters differ"
assert losses[-1] < losses[0], losses
hvd.shutdown()
print("rank %d ok" % r, flush=True)
os._exit(0)
