"""Run by test_lightning.py as `python lightning_ranks.py`, as a Lightning user runs a script: Lightning starts the
second rank itself (it runs this script again), and its DDPStrategy makes the process group with the switchml
backend. A tiny LightningModule trains three epochs; every rank prints its group's job, how many all-reduces it sent
through the switch, its first and last epoch's mean loss and the digests of its initial and final parameters."""

import os
import sys

import lightning as L
import torch
import torch.distributed as dist
import torch.nn as nn
from lightning.pytorch.strategies import DDPStrategy
from torch.utils.data import DataLoader, TensorDataset

import switchml_torch
from toy_ddp import digest

switched = [0]
_allreduce = switchml_torch.SwitchMLProcessGroup.allreduce


def counted_allreduce(self, tensors, opts=None):
    switched[0] += 1
    return _allreduce(self, tensors, opts)


switchml_torch.SwitchMLProcessGroup.allreduce = counted_allreduce


class Tiny(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 3))
        self.losses = []

    def training_step(self, batch, index):
        x, y = batch
        loss = nn.functional.cross_entropy(self.net(x), y)
        self.losses.append(loss.item())
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    torch.manual_seed(0)  # the same data on every rank; Lightning's sampler gives each rank its half
    x = torch.randn(512, 20)
    data = TensorDataset(x, x[:, :3].argmax(1))  # labels a model can learn
    torch.manual_seed(int(__import__("os").environ.get("LOCAL_RANK", "0")) + 1)  # different initial parameters
    model = Tiny()
    before = digest(model)
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy=DDPStrategy(process_group_backend="switchml"),
                        max_epochs=3, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(model, DataLoader(data, batch_size=32))
    group = dist.distributed_c10d._get_default_group()
    assert isinstance(group, switchml_torch.SwitchMLProcessGroup), type(group)
    steps = len(model.losses) // 3  # per epoch
    line = "rank %d of %d job %s switched %d first epoch's loss %.6f last's %.6f initial %s digest %s\n" % (
        trainer.global_rank, trainer.world_size, group.job, switched[0], sum(model.losses[:steps]) / steps,
        sum(model.losses[-steps:]) / steps, before, digest(model))
    # Both ranks write to one pipe (Lightning starts rank 1 with this process's streams): one write() of the whole
    # line, under the pipe's atomic size, so that the two lines cannot interleave (print may write the text and its
    # newline separately when output is unbuffered).
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), line.encode())


if __name__ == "__main__":
    main()
    sys.exit(0)
