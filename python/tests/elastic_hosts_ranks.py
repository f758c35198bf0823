"""Run by test_hosts.py: one rank per host under torchrun's dynamic rendezvous (c10d, --nnodes 1:2), training
with Horovod's elastic API through the switch while a host is lost and another added. It trains until it has been
through a world of one and is back at two; each rank writes what it saw to OUT/<host>.json."""

import json
import os
import socket
import sys
import time

import torch
import torch.nn.functional as F

import switchml_torch
import switchml_torch.horovod as hvd

out, host = sys.argv[1], sys.argv[2]
hvd.init()
torch.manual_seed(7)
model = torch.nn.Linear(8, 4)
optimizer = hvd.DistributedOptimizer(torch.optim.SGD(model.parameters(), lr=0.01),
                                     named_parameters=model.named_parameters())
state = hvd.elastic.TorchState(model, optimizer, step=0, worlds=[])
jobs = []


@hvd.elastic.run
def train(state):
    state.worlds.append(hvd.size())  # the same on every rank: sync made the histories agree
    jobs.append(switchml_torch.backend.job_name())
    print("host %s rank %d of %d starts at step %d in job %s" % (host, hvd.rank(), hvd.size(), state.step, jobs[-1]),
          flush=True)
    while not (state.step >= 10 and hvd.size() == 2 and 1 in state.worlds) and state.step < 5000:
        g = torch.Generator().manual_seed(state.step)
        x, y = torch.randn(16, 8, generator=g), torch.randn(16, 4, generator=g)
        optimizer.zero_grad()
        F.mse_loss(model(x), y).backward()
        optimizer.step()
        state.step += 1
        state.commit()
        print("host %s step %d world %d" % (host, state.step, hvd.size()), flush=True)
        time.sleep(0.05)


train(state)
digest = sum(float(p.double().sum()) * (i + 1) for i, p in enumerate(model.parameters()))
with open(os.path.join(out, host + ".json"), "w") as f:
    json.dump({"host": host, "rank": hvd.rank(), "world": hvd.size(), "step": state.step, "worlds": state.worlds,
               "jobs": jobs, "digest": digest, "hostname": socket.gethostname()}, f)
hvd.shutdown()
