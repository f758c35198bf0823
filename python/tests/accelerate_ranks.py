"""Run by test_accelerate.py as `python accelerate_ranks.py OUT`, as an Accelerate user runs a script with its
notebook_launcher (two CPU processes, torchelastic under it). Accelerate will not make a switchml group on a CPU host
(Accelerator(cpu=True, kwargs_handlers=[InitProcessGroupKwargs(backend="switchml")]) raises "Your assigned backend
switchml is not available, please use gloo"), so each process makes the group itself before Accelerator(), which then
uses the group it finds (docs/pytorch.md, "Hugging Face Accelerate"). A tiny model trains three epochs under DDP
(Accelerator.prepare); each rank writes OUT/rank-N.json: its group's job, how many all-reduces it sent through the
switch, Accelerate's view (distributed type, processes, the model's wrapper), its first and last epoch's mean loss and
the digests of its initial and final parameters."""

import json
import socket
import sys
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn as nn
from accelerate import Accelerator, notebook_launcher
from torch.utils.data import DataLoader


def train(out):
    import switchml_torch
    from toy_ddp import digest

    from trainer_checks import count_switched_allreduces, toy_problem
    switched = count_switched_allreduces()

    dist.init_process_group("switchml")  # env:// from torchelastic; before Accelerator(), which keeps this group
    accelerator = Accelerator(cpu=True)
    group = dist.distributed_c10d._get_default_group()
    assert isinstance(group, switchml_torch.SwitchMLProcessGroup), type(group)
    rank = accelerator.process_index
    data, model = toy_problem(rank)
    before = digest(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, loader = accelerator.prepare(model, optimizer, DataLoader(data, batch_size=32, shuffle=True))
    epochs = []
    for epoch in range(3):
        losses = []
        for xb, yb in loader:
            loss = nn.functional.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            accelerator.backward(loss)
            optimizer.step()
            losses.append(loss.item())
        epochs.append(sum(losses) / len(losses))
    result = dict(rank=rank, world_size=accelerator.num_processes, job=group.job, switched=switched[0],
                  distributed_type=str(accelerator.distributed_type), wrapper=type(model).__name__,
                  first_loss=epochs[0], last_loss=epochs[-1], initial=before,
                  digest=digest(accelerator.unwrap_model(model)))
    Path(out, "rank-%d.json" % rank).write_text(json.dumps(result))
    dist.destroy_process_group()


def main(out):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    notebook_launcher(train, (out,), num_processes=2, use_port=str(port))


if __name__ == "__main__":
    main(str(Path(sys.argv[1]).resolve()))
