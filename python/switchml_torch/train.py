"""DDP training of the Fashion-MNIST MLP (784-256-128-10), gradients averaged by the comm hook
(``--hook switchml|ring|ps``) or by DDP's own all-reduce on its process group (``--hook gloo`` or
``none``), which is Gloo's, or the switch's with ``--backend switchml``. Run by ``switchml
torch-train``, which starts the ranks; prints what ``switchml train`` prints."""

import argparse
import gzip
import hashlib
import json
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

from . import allreduce_hook, start_agent


def read_idx(path):
    with gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def load(directory, prefix):
    def find(name):
        for candidate in (name, name + ".gz"):
            path = os.path.join(directory, candidate)
            if os.path.exists(path):
                return path
        raise SystemExit("Fashion-MNIST file %s not found in %s; install it: sudo apt-get install dataset-fashion-mnist"
                         % (name, directory))
    images = read_idx(find(prefix + "-images-idx3-ubyte"))
    labels = read_idx(find(prefix + "-labels-idx1-ubyte"))
    x = torch.from_numpy(images.reshape(len(images), -1).astype(np.float32) / 255.0)
    return x, torch.from_numpy(labels.astype(np.int64))


def mlp():
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10))


def add_aggregation_arguments(ap):
    """``--hook`` and ``--backend``, as ``switchml torch-train`` passes them (also to python/bench/models.py)."""
    ap.add_argument("--hook", default="switchml", choices=["switchml", "ring", "ps", "gloo", "none"],
                    help="gloo and none: no hook (DDP's own all-reduce on the process group)")
    ap.add_argument("--backend", default="gloo", choices=["gloo", "switchml"],
                    help="the process group's backend (switchml: import switchml_torch's)")


def register_hook(model, hook, backend):
    """Registers ``hook``'s comm hook on the DDP ``model`` and returns the agent it all-reduces through, or None for
    ``gloo``/``none`` (DDP's own all-reduce on the process group). On the switchml backend the hook uses the
    backend's agent (one agent per host and job); otherwise it starts one."""
    if hook in ("gloo", "none"):
        return None
    if hook == "switchml" and backend == "switchml":
        agent = dist.distributed_c10d._get_default_group().agent
    else:
        agent = start_agent(algo=hook)
    model.register_comm_hook(agent, allreduce_hook)
    return agent


def checksum(model):
    h = hashlib.sha256()
    for p in model.parameters():
        h.update(p.detach().numpy().tobytes())
    return h.hexdigest()


def accuracy(model, x, y):
    with torch.no_grad():
        return (model(x).argmax(1) == y).float().mean().item()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    add_aggregation_arguments(ap)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.001)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--format", default="table", choices=["table", "json"])
    ap.add_argument("--rate-bps", type=int, default=None,
                    help="the links' rate when the ranks run in the emulated rack (reported as rate_bps)")
    args = ap.parse_args(argv)

    torch.set_num_threads(1)
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    progress = sys.stderr if args.format == "json" else sys.stdout
    x_train, y_train = load(args.data, "train")
    x_test, y_test = load(args.data, "t10k")
    if args.limit > 0:
        x_train, y_train = x_train[:args.limit], y_train[:args.limit]

    torch.manual_seed(args.seed)
    model = DistributedDataParallel(mlp())  # broadcasts rank 0's parameters
    group = dist.distributed_c10d._get_default_group()
    agent = register_hook(model, args.hook, args.backend)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    loss_fn = nn.CrossEntropyLoss()
    # Every rank takes the same number of steps: DDP all-reduces once per step on every rank.
    per_rank = len(x_train) // world // args.batch_size * args.batch_size
    start = time.monotonic()
    per_epoch = []
    for epoch in range(1, args.epochs + 1):
        order = torch.randperm(len(x_train), generator=torch.Generator().manual_seed(args.seed * 1000 + epoch))
        mine = order[rank * per_rank:(rank + 1) * per_rank]
        model.train()
        loss_sum, correct, steps = 0.0, 0, 0
        aggregation_before = agent.aggregation_seconds if agent else 0.0
        epoch_start = time.monotonic()
        for i in range(0, per_rank, args.batch_size):
            idx = mine[i:i + args.batch_size]
            out = model(x_train[idx])
            loss = loss_fn(out, y_train[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += loss.item()
            correct += (out.argmax(1) == y_train[idx]).sum().item()
            steps += 1
        seconds = time.monotonic() - epoch_start
        aggregation = (agent.aggregation_seconds - aggregation_before) if agent else None
        model.eval()
        test_accuracy = accuracy(model.module, x_test, y_test)
        stats = [None] * world
        dist.all_gather_object(stats, (per_rank, seconds, loss_sum / max(1, steps), correct, aggregation))
        images = sum(s[0] for s in stats)
        slowest = max(s[1] for s in stats)
        fractions = [s[4] / s[1] for s in stats if s[4] is not None and s[1] > 0]
        row = {"epoch": epoch, "images": images, "loss": sum(s[2] for s in stats) / world,
               "accuracy": sum(s[3] for s in stats) / images, "test_accuracy": test_accuracy,
               "images_per_s": images / slowest if slowest > 0 else 0.0,
               "aggregation_fraction": sum(fractions) / len(fractions) if fractions else None, "seconds": slowest}
        per_epoch.append(row)
        if rank == 0:
            print("epoch %d: loss %.4f, accuracy %.4f, test accuracy %.4f, %.0f images/s, aggregation %s, %.1f s"
                  % (epoch, row["loss"], row["accuracy"], test_accuracy, row["images_per_s"],
                     "n/a" if row["aggregation_fraction"] is None else "%.1f %%" % (100 * row["aggregation_fraction"]),
                     slowest), file=progress, flush=True)

    sums = [None] * world
    dist.all_gather_object(sums, checksum(model.module))
    identical = len(set(sums)) == 1
    if agent is not None:
        agent.close()
    if args.backend == "switchml":
        group.close()
    images = sum(r["images"] for r in per_epoch)
    seconds = sum(r["seconds"] for r in per_epoch)
    fractions = [r["aggregation_fraction"] for r in per_epoch if r["aggregation_fraction"] is not None]
    aggregation = args.backend if args.hook in ("gloo", "none") else args.hook
    summary = {"aggregation": aggregation, "hook": args.hook, "backend": args.backend, "workers": world, "epochs": args.epochs,
               "batch_size": args.batch_size, "test_accuracy": per_epoch[-1]["test_accuracy"] if per_epoch else None,
               "images_per_s": images / seconds if seconds > 0 else 0.0,
               "aggregation_fraction": sum(fractions) / len(fractions) if fractions else None,
               "parameters_identical": identical, "rate_bps": args.rate_bps, "wall_seconds": time.monotonic() - start,
               "torch_version": torch.__version__, "per_epoch": per_epoch}
    if rank == 0:
        if args.format == "json":
            print(json.dumps(summary))
        else:
            print("test accuracy %.4f, %.0f images/s, parameters identical on all %d ranks: %s"
                  % (summary["test_accuracy"], summary["images_per_s"], world, identical))
    dist.barrier()
    return 0 if identical else 2


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Gloo's teardown at interpreter exit (1.13) sometimes hangs after all work is done; nothing is left to clean up.
    os._exit(code)
