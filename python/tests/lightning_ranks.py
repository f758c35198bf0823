"""Run by test_lightning.py as `python lightning_ranks.py [fsdp]`, as a Lightning user runs a script: Lightning starts
the second rank itself (it runs this script again), and its DDPStrategy makes the process group with the switchml
backend. A tiny LightningModule trains three epochs; every rank prints its group's job, how many all-reduces it sent
through the switch, its first and last epoch's mean loss and the digests of its initial and final parameters.

With `fsdp`, FSDPStrategy(process_group_backend="switchml") on CPU instead, which Lightning 2.6 and torch 2.13 refuse
as they are (docs/pytorch.md, "Lightning"): Lightning's check (`The strategy `fsdp` requires a GPU accelerator`) looks
for FSDPStrategy's exact type, so a subclass passes it; and torch's FSDP1 takes a CPU module only with
device_id=torch.device("cpu"), which Lightning does not pass on CPU, so the module wraps its layers itself in
configure_model (Lightning then leaves the wrapped model as it is). The count printed is then of the reduce-scatters
sent through the switch (FSDP reduce-scatters the gradients), and the final digest is of every rank's shards of the
parameters, gathered."""

import hashlib
import os
import sys

import lightning as L
import torch
import torch.distributed as dist
import torch.nn as nn
from lightning.pytorch.strategies import DDPStrategy, FSDPStrategy
from torch.utils.data import DataLoader, TensorDataset

import switchml_torch
from toy_ddp import digest

switched = [0]
_allreduce = switchml_torch.SwitchMLProcessGroup.allreduce


def counted_allreduce(self, tensors, opts=None):
    switched[0] += 1
    return _allreduce(self, tensors, opts)


switchml_torch.SwitchMLProcessGroup.allreduce = counted_allreduce
FSDP = len(sys.argv) > 1 and sys.argv[1] == "fsdp"
if FSDP:
    from torch.distributed.fsdp import FullyShardedDataParallel
    switchml_torch.SwitchMLProcessGroup.allreduce = _allreduce  # counted instead: the reduce-scatters, whose every
    # form sends its parts through _reduce_part
    _reduce_part = switchml_torch.SwitchMLProcessGroup._reduce_part

    def counted_reduce_part(self, *args):
        switched[0] += 1
        return _reduce_part(self, *args)
    switchml_torch.SwitchMLProcessGroup._reduce_part = counted_reduce_part


class CPUFSDPStrategy(FSDPStrategy):
    """FSDPStrategy under another type, which Lightning's accelerator check (`type(...) is FSDPStrategy`) lets run on
    CPU."""


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

    def configure_model(self):
        if FSDP and not isinstance(self.net, FullyShardedDataParallel):
            # rank 0's initial parameters on every rank, as DDP makes them (FSDP's sync_module_states wants a GPU)
            with torch.no_grad():
                for p in self.net.parameters():
                    dist.broadcast(p, 0)
            self.net = FullyShardedDataParallel(self.net, device_id=torch.device("cpu"), use_orig_params=True)

    def final_digest(self):
        if not FSDP:
            return digest(self)
        # Every rank's shards (use_orig_params: each parameter's part on this rank, empty where another rank holds it),
        # gathered on every rank in rank order; FSDP1's own summon_full_params fails on CPU, with Gloo too, on leaving
        # ("Trying to resize storage that is not resizable").
        shards = [None] * dist.get_world_size()
        dist.all_gather_object(shards, [p.detach().float().numpy().tobytes() for p in self.net.parameters()])
        return hashlib.sha256(b"".join(b"".join(rank) for rank in shards)).hexdigest()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def main():
    torch.manual_seed(0)  # the same data on every rank; Lightning's sampler gives each rank its half
    x = torch.randn(512, 20)
    data = TensorDataset(x, x[:, :3].argmax(1))  # labels a model can learn
    torch.manual_seed(int(__import__("os").environ.get("LOCAL_RANK", "0")) + 1)  # different initial parameters
    model = Tiny()
    before = digest(model)
    strategy = (CPUFSDPStrategy if FSDP else DDPStrategy)(process_group_backend="switchml")
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy=strategy,
                        max_epochs=3, logger=False, enable_checkpointing=False, enable_progress_bar=False,
                        enable_model_summary=False)
    trainer.fit(model, DataLoader(data, batch_size=32))
    group = dist.distributed_c10d._get_default_group()
    assert isinstance(group, switchml_torch.SwitchMLProcessGroup), type(group)
    steps = len(model.losses) // 3  # per epoch
    line = "rank %d of %d job %s switched %d first epoch's loss %.6f last's %.6f initial %s digest %s\n" % (
        trainer.global_rank, trainer.world_size, group.job, switched[0], sum(model.losses[:steps]) / steps,
        sum(model.losses[-steps:]) / steps, before, model.final_digest())
    # Both ranks write to one pipe (Lightning starts rank 1 with this process's streams): one write() of the whole
    # line, under the pipe's atomic size, so that the two lines cannot interleave (print may write the text and its
    # newline separately when output is unbuffered).
    sys.stdout.flush()
    os.write(sys.stdout.fileno(), line.encode())


if __name__ == "__main__":
    main()
    sys.exit(0)
