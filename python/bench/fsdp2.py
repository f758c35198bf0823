"""FSDP2 (``torch.distributed.fsdp.fully_shard``, PyTorch 2) training a small transformer on CPU, through the switch
and on Gloo, in one launch, the same steps from the same start: the loss after the last step on each and their
ratio. FSDP2 reduce-scatters the gradients (through the switch on the switchml group: the whole tensor all-reduced,
this rank's shard kept) and all-gathers the parameters (through Gloo on either group).

Run under a launcher, e.g. ``switchml torchrun --workers 4 --python python/.venv-torch2/bin/python
python/bench/fsdp2.py`` (``--rack --rate 1gbit`` before the script for the emulated rack). The default process
group is the switchml backend's and the Gloo run's group a ``new_group(backend="gloo")`` of the same ranks (with
``--backends gloo`` alone the default group is Gloo's and no switch is needed). Every rank builds the model from
the same seed (fully_shard keeps each rank's own parameters and broadcasts nothing) and trains on its own batches,
seeded by its rank. Rank 0 prints one JSON object per backend, then the comparison: the losses and their ratio,
and for each backend whether every rank's full parameters (its shards gathered) are the same, and how many
reduce-scatters went through the switchml group (none on Gloo's).

fully_shard on CPU needs nothing special on torch 2.13: a device mesh of type ``cpu`` over the group
(``DeviceMesh.from_group``), float32 parameters (FSDP2 then reduce-scatters with ReduceOp.AVG, which the switchml
group sends through the switch and Gloo takes too); docs/pytorch.md, "FSDP2". Not timed: the runs only train."""

import argparse
import hashlib
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn

import switchml_torch  # noqa: F401 (registers the switchml backend)

BACKENDS = ("switchml", "gloo")


def fully_shard_api():
    """FSDP2's ``fully_shard``: ``torch.distributed.fsdp`` from 2.6 on, ``torch.distributed._composable.fsdp`` in
    2.4-2.5; a SystemExit naming the torch in use where there is neither (1.13 has no FSDP2)."""
    try:
        from torch.distributed.fsdp import fully_shard
        return fully_shard
    except ImportError:
        pass
    try:
        from torch.distributed._composable.fsdp import fully_shard
        return fully_shard
    except ImportError:
        raise SystemExit("FSDP2 (fully_shard) needs PyTorch 2.4 or later; this is torch %s" % torch.__version__)


class TinyTransformer(nn.Module):
    """A sequence classifier: token and position embeddings, ``layers`` nn.TransformerEncoderLayer's (no dropout, so
    a step depends only on the parameters and the batch), and a linear head on the first position."""

    def __init__(self, vocab=32, length=8, width=32, heads=4, feedforward=64, layers=2, classes=4):
        super().__init__()
        self.tokens = nn.Embedding(vocab, width)
        self.positions = nn.Embedding(length, width)
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(width, heads, feedforward, dropout=0.0, batch_first=True)
                                    for _ in range(layers))
        self.head = nn.Linear(width, classes)

    def forward(self, tokens):
        x = self.tokens(tokens) + self.positions(torch.arange(tokens.shape[1]))
        for layer in self.layers:
            x = layer(x)
        return self.head(x[:, 0])


def batches(rank, steps, size, vocab=32, length=8, classes=4):
    """This rank's batches, seeded by its rank: random tokens, labelled by the last token's class (a rule the
    model can learn only by attending across the sequence)."""
    g = torch.Generator().manual_seed(1000 + rank)
    for _ in range(steps):
        tokens = torch.randint(0, vocab, (size, length), generator=g)
        yield tokens, tokens[:, -1] % classes


class ReduceScatterCount:
    """Counts the reduce-scatters the switchml group sends through its agent in this process (every form of
    reduce-scatter goes through ``SwitchMLProcessGroup._reduce_part``)."""

    def __init__(self):
        self.calls = 0
        reduce_part = switchml_torch.SwitchMLProcessGroup._reduce_part
        count = self

        def counted(group, *args):
            count.calls += 1
            return reduce_part(group, *args)
        switchml_torch.SwitchMLProcessGroup._reduce_part = counted


def full_digest(model, group):
    """SHA-256 of the whole model's parameters, every rank's shards (dim-0 chunks, in rank order) gathered over
    ``group``. Gathered through the group itself, not ``DTensor.full_tensor()``: with a switchml mesh and a Gloo mesh of
    the same ranks in one process, full_tensor() of the Gloo run's parameters went through the switchml group
    (docs/pytorch.md, "FSDP2")."""
    shards = [None] * group.size()
    dist.all_gather_object(shards, [p.to_local().detach().float().numpy().tobytes() for p in model.parameters()],
                           group=group)
    h = hashlib.sha256()
    for parts in zip(*shards):
        h.update(b"".join(parts))
    return h.hexdigest()


def train(group, args, counted):
    """Trains the model fully sharded over ``group`` for --steps; returns this rank's row."""
    from torch.distributed.device_mesh import DeviceMesh

    fully_shard = fully_shard_api()
    mesh = DeviceMesh.from_group(group, "cpu")
    torch.manual_seed(args.seed)  # the same initial parameters on every rank
    model = TinyTransformer(layers=args.layers)
    for layer in model.layers:
        fully_shard(layer, mesh=mesh)
    fully_shard(model, mesh=mesh)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    before, losses = counted.calls, []
    for tokens, labels in batches(dist.get_rank(), args.steps, args.batch_size):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(tokens), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return {"losses": losses, "digest": full_digest(model, group), "switched_reduce_scatters": counted.calls - before}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backends", default=",".join(BACKENDS), help="switchml, gloo or both (default), in that order")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=16, help="sequences per step and rank (default 16)")
    ap.add_argument("--layers", type=int, default=2, help="encoder layers, each fully sharded (default 2)")
    ap.add_argument("--lr", type=float, default=3e-3, help="AdamW's learning rate (default 3e-3)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not backends or any(b not in BACKENDS for b in backends):
        raise SystemExit("--backends: one or both of %s, not %r" % (", ".join(BACKENDS), args.backends))
    if args.steps < 1:
        raise SystemExit("--steps must be at least 1")
    fully_shard_api()  # refuses a torch without FSDP2 before any group is made

    torch.set_num_threads(1)
    start = time.monotonic()
    dist.init_process_group(backends[0] if backends == ["gloo"] else "switchml")
    default = dist.distributed_c10d._get_default_group()
    groups = {"switchml": default, "gloo": default if backends == ["gloo"] else dist.new_group(backend="gloo")}
    counted = ReduceScatterCount()
    rank, world = dist.get_rank(), dist.get_world_size()
    rows = {}
    for backend in backends:
        mine = train(groups[backend], args, counted)
        every = [None] * world
        dist.all_gather_object(every, mine)
        rows[backend] = {"backend": backend, "workers": world, "steps": args.steps, "layers": args.layers,
                         "first_loss": sum(r["losses"][0] for r in every) / world,
                         "loss": sum(r["losses"][-1] for r in every) / world,
                         "parameters_digest": every[0]["digest"],
                         "parameters_identical": len({r["digest"] for r in every}) == 1,
                         "switched_reduce_scatters": min(r["switched_reduce_scatters"] for r in every),
                         "torch_version": torch.__version__}
        if rank == 0:
            print(json.dumps(rows[backend]), flush=True)
    if rank == 0 and len(rows) == 2:
        switch, gloo = rows["switchml"]["loss"], rows["gloo"]["loss"]
        print(json.dumps({"comparison": "switchml/gloo", "workers": world, "steps": args.steps,
                          "loss_switchml": switch, "loss_gloo": gloo, "loss_ratio": switch / gloo,
                          "wall_seconds": time.monotonic() - start}), flush=True)
    dist.barrier()
    if "switchml" in backends:
        default.close()
    return 0 if all(r["parameters_identical"] for r in rows.values()) else 2


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Gloo's teardown at interpreter exit sometimes hangs after all work is done; nothing is left to clean up.
    os._exit(code)
