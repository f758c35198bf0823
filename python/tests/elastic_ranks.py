"""Run by test_real_torchrun.py under torchrun with --max_restarts 1: Horovod's elastic API on torchrun's restarts.
On the first attempt rank 1 dies after its third commit; torchrun restarts both ranks, which go on from the newest
commit. Every rank prints where each attempt started, the reset callbacks it saw, and a digest of its parameters."""

import os

import torch
import torch.nn.functional as F

import switchml_torch.horovod as hvd

STEPS = 6
attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))
hvd.init()
torch.manual_seed(100 + hvd.rank() + attempt)  # different on every rank and attempt: sync must make them agree
model = torch.nn.Linear(8, 4)
optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9),
                                     named_parameters=model.named_parameters())
resets = []
state = hvd.elastic.TorchState(model, optimizer, step=0, losses=[])
state.register_reset_callbacks([lambda: resets.append(hvd.size())])


@hvd.elastic.run
def train(state):
    print("rank %d attempt %d starts at step %d" % (hvd.rank(), attempt, state.step), flush=True)
    for step in range(state.step, STEPS):
        g = torch.Generator().manual_seed(step * 10 + hvd.rank())
        x = torch.randn(16, 8, generator=g)
        y = torch.randn(16, 4, generator=g)
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        state.step = step + 1
        state.losses.append(round(float(loss), 4))
        state.commit()
        if attempt == 0 and hvd.rank() == 1 and state.step == 3:
            os._exit(3)  # dies without a word after its third commit


train(state)
digest = sum(float(p.double().sum()) * (i + 1) for i, p in enumerate(model.parameters()))
print("rank %d attempt %d done: step %d resets %s losses %d digest %.10f"
      % (hvd.rank(), attempt, state.step, resets, len(state.losses), digest), flush=True)
hvd.shutdown()
