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
and for each backend whether every rank's full parameters (its shards gathered) are the same, how many
reduce-scatters went through the switchml group (none on Gloo's) and in which dtypes, and whether the parameters'
DTensors are on the mesh of the group they were trained on; the comparison also says how far the two runs' final
parameters are apart. ``--param-dtype bfloat16 --reduce-dtype float32`` trains in mixed precision (FSDP2's
``MixedPrecisionPolicy``: parameters all-gathered and computed in bfloat16, gradients reduce-scattered in float32).

Each run's mesh has its own dimension name (the backend's): torch 2.13's DeviceMesh compares equal to another of the
same ranks and device type unless their names differ, whatever their groups, and DTensor's sharding-propagation cache
then hands the second run's DTensors the first run's mesh (docs/pytorch.md, "FSDP2").

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
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def fully_shard_api():
    """FSDP2's ``fully_shard`` and ``MixedPrecisionPolicy``: ``torch.distributed.fsdp`` from 2.6 on,
    ``torch.distributed._composable.fsdp`` in 2.4-2.5; a SystemExit naming the torch in use where there is neither
    (1.13 has no FSDP2)."""
    try:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        return fully_shard, MixedPrecisionPolicy
    except ImportError:
        pass
    try:
        from torch.distributed._composable.fsdp import MixedPrecisionPolicy, fully_shard
        return fully_shard, MixedPrecisionPolicy
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
    reduce-scatter goes through ``SwitchMLProcessGroup._reduce_part(output, flat, start, op)``), and notes the
    dtypes of the tensors it sent."""

    def __init__(self):
        self.calls = 0
        self.dtypes = set()
        reduce_part = switchml_torch.SwitchMLProcessGroup._reduce_part
        count = self

        def counted(group, output, flat, *args):
            count.calls += 1
            count.dtypes.add(str(flat.dtype).replace("torch.", ""))
            return reduce_part(group, output, flat, *args)
        switchml_torch.SwitchMLProcessGroup._reduce_part = counted


def full_parameters(model):
    """The whole model's parameters, each ``DTensor.full_tensor()`` (an all-gather over its mesh's group), as one
    flat float32 tensor."""
    return torch.cat([p.full_tensor().detach().float().reshape(-1) for p in model.parameters()])


def train(backend, group, args, counted):
    """Trains the model fully sharded over ``group`` for --steps; returns the whole model's parameters at the end
    (``full_parameters``) and this rank's row."""
    from torch.distributed.device_mesh import DeviceMesh

    fully_shard, MixedPrecisionPolicy = fully_shard_api()
    # Named after the backend: unnamed, the second run's mesh would equal the first's (the same ranks and device
    # type) and DTensor would give the second run's parameters the first run's mesh (the module's doc).
    mesh = DeviceMesh.from_group(group, "cpu", mesh_dim_names=(backend,))
    options = {}
    if args.param_dtype or args.reduce_dtype:
        options["mp_policy"] = MixedPrecisionPolicy(param_dtype=DTYPES.get(args.param_dtype),
                                                    reduce_dtype=DTYPES.get(args.reduce_dtype))
    torch.manual_seed(args.seed)  # the same initial parameters on every rank
    model = TinyTransformer(layers=args.layers)
    for layer in model.layers:
        fully_shard(layer, mesh=mesh, **options)
    fully_shard(model, mesh=mesh, **options)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    before, losses = counted.calls, []
    counted.dtypes.clear()
    for tokens, labels in batches(dist.get_rank(), args.steps, args.batch_size):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(tokens), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    loss_dtype = str(loss.dtype).replace("torch.", "")  # the forward pass's: bfloat16 under --param-dtype bfloat16
    reduce_scatters, dtypes = counted.calls - before, sorted(counted.dtypes)
    own_mesh = all(p.device_mesh.get_group().group_name == group.group_name for p in model.parameters())
    full = full_parameters(model)
    return full, {"losses": losses, "digest": hashlib.sha256(full.numpy().tobytes()).hexdigest(),
                  "switched_reduce_scatters": reduce_scatters, "switched_reduce_dtypes": dtypes,
                  "parameters_on_own_mesh": own_mesh, "loss_dtype": loss_dtype}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backends", default=",".join(BACKENDS), help="switchml, gloo or both (default), in that order")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=16, help="sequences per step and rank (default 16)")
    ap.add_argument("--layers", type=int, default=2, help="encoder layers, each fully sharded (default 2)")
    ap.add_argument("--lr", type=float, default=3e-3, help="AdamW's learning rate (default 3e-3)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--param-dtype", choices=sorted(DTYPES), help="MixedPrecisionPolicy's param_dtype: the dtype"
                    " FSDP2 all-gathers the parameters in and the forward and backward passes compute in (default:"
                    " no policy, float32 throughout)")
    ap.add_argument("--reduce-dtype", choices=sorted(DTYPES), help="MixedPrecisionPolicy's reduce_dtype: the dtype"
                    " FSDP2 reduce-scatters the gradients in (default: param_dtype's)")
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
    rows, full = {}, {}
    for backend in backends:
        full[backend], mine = train(backend, groups[backend], args, counted)
        every = [None] * world
        dist.all_gather_object(every, mine)
        rows[backend] = {"backend": backend, "workers": world, "steps": args.steps, "layers": args.layers,
                         "first_loss": sum(r["losses"][0] for r in every) / world,
                         "loss": sum(r["losses"][-1] for r in every) / world,
                         "losses": [sum(step) / world for step in zip(*(r["losses"] for r in every))],
                         "parameters_digest": every[0]["digest"],
                         "parameters_identical": len({r["digest"] for r in every}) == 1,
                         "switched_reduce_scatters": min(r["switched_reduce_scatters"] for r in every),
                         "switched_reduce_dtypes": sorted({d for r in every for d in r["switched_reduce_dtypes"]}),
                         "parameters_on_own_mesh": all(r["parameters_on_own_mesh"] for r in every),
                         "param_dtype": args.param_dtype, "reduce_dtype": args.reduce_dtype,
                         "loss_dtype": every[0]["loss_dtype"],
                         "torch_version": torch.__version__}
        if rank == 0:
            print(json.dumps(rows[backend]), flush=True)
    if rank == 0 and len(rows) == 2:
        switch, gloo = rows["switchml"]["loss"], rows["gloo"]["loss"]
        difference = (full["switchml"] - full["gloo"]).abs()
        print(json.dumps({"comparison": "switchml/gloo", "workers": world, "steps": args.steps,
                          "loss_switchml": switch, "loss_gloo": gloo, "loss_ratio": switch / gloo,
                          "losses_switchml": rows["switchml"]["losses"], "losses_gloo": rows["gloo"]["losses"],
                          "parameters_equal": bool(torch.equal(full["switchml"], full["gloo"])),
                          "parameters_differing": int((difference > 0).sum()), "parameters": difference.numel(),
                          "parameters_max_difference": difference.max().item(),
                          "parameters_max_magnitude": full["gloo"].abs().max().item(),
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
