"""Real models trained with PyTorch DDP through the switch or through Gloo, side by side: ResNet-18, ResNet-50, VGG-11,
VGG-16, MobileNet-V2 (torchvision's, built with weights=None: nothing is downloaded), a BERT-base-shaped
nn.TransformerEncoder (110 M parameters, its word embedding included) and a DLRM-shaped recommender whose embedding
tables hold most of its parameters (so most of its gradient is zero rows). Inputs are synthetic, of each model's
shape; DDP keeps its defaults (25 MiB buckets, all-reduces overlapped with the backward pass). torchvision is imported
only for its models: bert_base and dlrm need none (on torch 2.13.0+cpu the index's torchvision 0.28.0 does not import),
and a torchvision model without a torchvision that imports stops the run before any rank joins, saying why.

Run by `switchml torch-train --model NAME[,NAME...] [--steps N]` (with --rack --rate R in the emulated rack), or under
a launcher: `switchml torchrun --workers 4 python/bench/models.py --model resnet18 --backend switchml --hook none`.
--backend and --hook are torch-train's: --hook none is DDP's own all-reduce on the backend (Gloo, or the switch with
--backend switchml); --hook switchml|ring|ps averages each bucket through an agent.

Each rank trains on its own fixed synthetic batch (seeded by --seed and its rank, so the same on every backend) with
momentum SGD; the first --warmup steps are not timed. Rank 0 prints one row (or JSON object) per model: parameters,
gradient bytes, step time and samples/s (the slowest rank's), the share of the timed steps with
an all-reduce in flight (where an agent carries them: a hook, or the switchml backend; null for Gloo), the loss of
the first and the last step (the mean over ranks), the share of gradient elements that were zero after the last
step, the SHA-256 of the parameters with whether every rank's is the same (exit code 2 when not), and the largest
rank's peak resident memory so far (its process's: models before in the same run included)."""

import argparse
import gc
import json
import math
import os
import resource
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel

import switchml_torch  # noqa: F401 (registers the switchml backend)
from switchml_torch.train import add_aggregation_arguments, checksum, register_hook


class Workload:
    """One model, its synthetic batch and its loss. ``batch_size`` and ``resolution`` (image models only) are the
    defaults, chosen so that a step of 4 ranks fits 2 cores and 24 GiB; ``lr`` is momentum SGD's; ``torchvision``
    whether building it needs torchvision."""

    def __init__(self, build, batch, loss, batch_size, describe, lr=0.01, resolution=None, torchvision=False):
        self.build, self.batch, self.loss = build, batch, loss
        self.batch_size, self.describe, self.lr, self.resolution = batch_size, describe, lr, resolution
        self.torchvision = torchvision


def import_torchvision(names):
    """torchvision, for the models ``names`` that need it; a SystemExit naming them, the torch in use and what is
    wrong with torchvision (missing, or failing to import: torch 2.13.0+cpu with the index's torchvision 0.28.0 raises
    "operator torchvision::nms does not exist", a torchvision built for another torch) where it does not import."""
    try:
        import torchvision
        return torchvision
    except Exception as e:
        missing = isinstance(e, ModuleNotFoundError) and (e.name or "").split(".")[0] == "torchvision"
        others = [n for n, w in MODELS.items() if not w.torchvision]
        raise SystemExit("%s need%s torchvision, which %s on torch %s (%s: %s); install the torchvision built for this"
                         " torch, or train a model that needs none: %s" % (
                             ", ".join(names), "s" if len(names) == 1 else "", "is not installed" if missing
                             else "does not import", torch.__version__, type(e).__name__,
                             (str(e).splitlines() or [""])[0], ", ".join(others)))


def vision(name, batch_size, resolution):
    """A torchvision ImageNet classifier (1000 classes). Its adaptive pooling before the classifier keeps the
    parameters, and so the gradient bytes, those of 224x224 inputs at any input size."""
    def build(args):
        return getattr(import_torchvision([name]).models, name)(weights=None)

    def batch(g, n, args):
        side = args.resolution or resolution
        return (torch.randn(n, 3, side, side, generator=g),), torch.randint(0, 1000, (n,), generator=g)

    return Workload(build, batch, nn.functional.cross_entropy, batch_size,
                    lambda args: "3x{0}x{0} images, 1000 classes".format(args.resolution or resolution),
                    resolution=resolution, torchvision=True)


class BertBase(nn.Module):
    """BERT-base's shape for sequence classification: word, position and token-type embeddings (30522, 512 and 2
    rows of 768), 12 encoder layers (12 heads, feed-forward 3072, GELU, dropout 0.1), the pooler over the first
    token and a 2-class head: 109.5 M parameters."""

    def __init__(self, vocab=30522, hidden=768, layers=12, heads=12, feedforward=3072, positions=512, labels=2):
        super().__init__()
        self.words = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(positions, hidden)
        self.types = nn.Embedding(2, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.dropout = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(hidden, heads, feedforward, dropout=0.1, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.pooler = nn.Linear(hidden, hidden)
        self.classifier = nn.Linear(hidden, labels)

    def forward(self, tokens):
        x = self.words(tokens) + self.positions(torch.arange(tokens.shape[1])) + self.types(torch.zeros_like(tokens))
        x = self.encoder(self.dropout(self.norm(x)))
        return self.classifier(torch.tanh(self.pooler(x[:, 0])))


BERT_SEQUENCE = 32


def bert_batch(g, n, args):
    tokens = torch.randint(0, 30522, (n, args.sequence_length or BERT_SEQUENCE), generator=g)
    return (tokens,), torch.randint(0, 2, (n,), generator=g)


def perceptron(sizes, last_relu):
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers.append(nn.Linear(a, b))
        if last_relu or i < len(sizes) - 2:
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


class Dlrm(nn.Module):
    """DLRM's shape (Naumov et al. 2019, its Criteo configuration): 13 dense features through a 13-512-256-64
    perceptron, 26 categorical features each looked up in its own table of 64-wide rows (one of 1 M rows, one of
    300 k, one of 100 k, 23 of 10 k: 104 M of the 105 M parameters), the pairwise dot products of the 27 vectors,
    and a 415-512-256-1 perceptron to a click logit. A batch touches at most batch x 26 rows, so nearly all of the
    tables' gradient is zero rows; DDP all-reduces it dense (nn.Embedding's default, as the switch adds dense
    tensors)."""

    ROWS = (1_000_000, 300_000, 100_000) + (10_000,) * 23
    DENSE = 13

    def __init__(self, rows=ROWS, dim=64):
        super().__init__()
        self.bottom = perceptron((self.DENSE, 512, 256, dim), last_relu=True)
        self.tables = nn.ModuleList(nn.Embedding(n, dim) for n in rows)
        for table, n in zip(self.tables, rows):
            nn.init.uniform_(table.weight, -math.sqrt(1 / n), math.sqrt(1 / n))  # DLRM's initialisation
        vectors = len(rows) + 1
        self.register_buffer("pairs", torch.tril_indices(vectors, vectors, -1), persistent=False)
        self.top = perceptron((dim + vectors * (vectors - 1) // 2, 512, 256, 1), last_relu=False)

    def forward(self, dense, sparse):
        x = self.bottom(dense)
        vectors = torch.stack([x] + [table(sparse[:, i]) for i, table in enumerate(self.tables)], 1)
        dots = torch.bmm(vectors, vectors.transpose(1, 2))[:, self.pairs[0], self.pairs[1]]
        return self.top(torch.cat([x, dots], 1)).squeeze(1)


def dlrm_batch(g, n, args):
    sparse = torch.stack([torch.randint(0, rows, (n,), generator=g) for rows in Dlrm.ROWS], 1)
    dense = torch.rand(n, Dlrm.DENSE, generator=g)
    return (dense, sparse), torch.randint(0, 2, (n,), generator=g).float()


MODELS = {
    "resnet18": vision("resnet18", 16, 64),
    "resnet50": vision("resnet50", 4, 64),
    "vgg11": vision("vgg11", 4, 32),
    "vgg16": vision("vgg16", 4, 32),
    "mobilenet_v2": vision("mobilenet_v2", 16, 64),
    "bert_base": Workload(lambda args: BertBase(), bert_batch, nn.functional.cross_entropy, 2,
                          lambda args: "sequences of %d tokens (vocabulary 30522), 2 classes"
                          % (args.sequence_length or BERT_SEQUENCE), lr=0.001),
    "dlrm": Workload(lambda args: Dlrm(), dlrm_batch, nn.functional.binary_cross_entropy_with_logits, 128,
                     lambda args: "13 dense and 26 categorical features, a click label"),
}


def parse_models(text):
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown or not names:
        raise SystemExit("unknown model %s (--model); known: %s" % (", ".join(unknown) or repr(text), ", ".join(MODELS)))
    return names


def train(name, args, rank, world, agent):
    """Trains one model for --steps steps; returns (its row, the hook's agent for the next model)."""
    workload = MODELS[name]
    batch_size = args.batch_size or workload.batch_size
    lr = args.lr or workload.lr
    torch.manual_seed(args.seed)
    module = workload.build(args)
    parameters = sum(p.numel() for p in module.parameters())
    gradient_bytes = sum(p.numel() * p.element_size() for p in module.parameters() if p.requires_grad)
    model = DistributedDataParallel(module)  # broadcasts rank 0's parameters and buffers
    if agent is None:
        agent = register_hook(model, args.hook, args.backend)
    else:  # the same job's agent serves the next model
        model.register_comm_hook(agent, switchml_torch.allreduce_hook)
    # The time with an all-reduce in flight: the hook's agent, or the switchml backend's (DDP all-reduces through it).
    timing = agent or getattr(dist.distributed_c10d._get_default_group(), "agent", None)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    model._set_ddp_runtime_logging_sample_rate(1)  # DDP's own timers of backward and its all-reduces, every step
    inputs, target = workload.batch(torch.Generator().manual_seed(args.seed * 1000 + rank), batch_size, args)
    torch.manual_seed(args.seed * 1000 + rank)  # dropout's masks: this rank's own, the same on every backend
    model.train()
    losses, step_seconds, aggregation = [], [], 0.0
    busy = None  # the whole machine's busy CPU-seconds at the first timed step
    overlap = [0.0, 0.0, 0.0]  # backward compute, all-reduce in flight, the two at once: seconds over timed steps
    for step in range(args.steps):
        in_flight = timing.aggregation_seconds if timing else 0.0
        if step == args.warmup:
            busy = machine_busy_seconds()
        start = time.monotonic()
        optimizer.zero_grad()
        loss = workload.loss(model(*inputs), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if step >= args.warmup:
            step_seconds.append(time.monotonic() - start)
            aggregation += (timing.aggregation_seconds - in_flight) if timing else 0.0
            overlap = [a + b for a, b in zip(overlap, ddp_step_times(model))]
    end = machine_busy_seconds()
    busy = None if busy is None or end is None else end - busy
    gradients = [p.grad for p in model.parameters() if p.grad is not None]
    zeros = sum(int((g == 0).sum()) for g in gradients) / max(1, sum(g.numel() for g in gradients))
    stats = [None] * world
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB
    dist.all_gather_object(stats, (losses, sum(step_seconds), aggregation if timing else None, checksum(module), peak,
                                   overlap, busy))
    slowest = max(s[1] for s in stats)
    timed = args.steps - args.warmup
    fractions = [s[2] / s[1] for s in stats if s[2] is not None and s[1] > 0]
    digests = {s[3] for s in stats}
    row = {"model": name, "parameters": parameters, "gradient_bytes": gradient_bytes,
           "input": workload.describe(args), "batch_size": batch_size,
           "optimizer": "SGD lr %g momentum 0.9" % lr, "steps": args.steps, "warmup_steps": args.warmup,
           "workers": world, "backend": args.backend, "hook": args.hook,
           "aggregation": args.backend if args.hook in ("gloo", "none") else args.hook,
           "step_seconds": slowest / timed, "samples_per_s": world * batch_size * timed / slowest if slowest > 0 else 0.0,
           "aggregation_fraction": sum(fractions) / len(fractions) if fractions else None,
           "first_loss": sum(s[0][0] for s in stats) / world, "loss": sum(s[0][-1] for s in stats) / world,
           "zero_gradient_fraction": zeros, "parameters_digest": stats[0][3], "parameters_identical": len(digests) == 1,
           "peak_rss_bytes": max(s[4] for s in stats), "rate_bps": args.rate_bps,
           # rank 0's reading of the whole machine (in the rack one machine plays every host): per timed step
           "cpu_seconds_per_step": None if stats[0][6] is None else stats[0][6] / timed}
    row.update(overlap_fields(stats, slowest, timed))
    del model, module, optimizer, gradients, inputs, target
    gc.collect()
    return row, agent


def machine_busy_seconds():
    """The whole machine's busy CPU-seconds so far: user, nice, system, irq, softirq and steal time of /proc/stat's
    first line (every process and the kernel's packet work; idle and iowait left out), in USER_HZ ticks of 10 ms;
    None where there is no /proc/stat. The JVM side's bench reads the same (cpu_s)."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    return sum(int(fields[i]) for i in (1, 2, 3, 6, 7, 8) if i < len(fields)) / 100.0


def ddp_step_times(model):
    """DDP's own timers for the last step (its logging data, sampled every step), in seconds: backward computation
    (first to last gradient), all-reduces in flight (the first bucket's launch to the last bucket's completion), and
    the two at once (the first launch to the end of the backward computation)."""
    d = model._get_ddp_logging_data()
    return [d.get("backward_compute_time", 0) / 1e9, d.get("backward_comm_time", 0) / 1e9,
            d.get("backward_compute_comm_overlap_time", 0) / 1e9]


def overlap_fields(stats, slowest, timed):
    """Issue 38's DDP overlap, as the mean over ranks per timed step: the share of the step with an all-reduce in
    flight, the share of that which overlaps the backward computation, and the idle gap after the last bucket
    (all-reduces still in flight once backward is done)."""
    world = len(stats)
    compute, comm, both = (sum(s[5][i] for s in stats) / world / timed for i in range(3))
    step = slowest / timed
    return {"ddp_backward_compute_seconds": compute, "ddp_allreduce_in_flight_seconds": comm,
            "ddp_overlap_seconds": both, "ddp_idle_after_backward_seconds": max(0.0, comm - both),
            "allreduce_in_flight_share": comm / step if step > 0 else 0.0,
            "overlapped_share": both / comm if comm > 0 else 0.0}


def print_row(row, out):
    share = "n/a" if row["aggregation_fraction"] is None else "%.0f %%" % (100 * row["aggregation_fraction"])
    print("%-13s %7.1f M %8.1f MB %9.3f s %9.1f %6s %9.4f %9.4f %6.1f %%  %s %s" % (
        row["model"], row["parameters"] / 1e6, row["gradient_bytes"] / 1e6, row["step_seconds"], row["samples_per_s"],
        share, row["first_loss"], row["loss"], 100 * row["zero_gradient_fraction"], row["parameters_digest"][:12],
        "identical" if row["parameters_identical"] else "DIFFER"), file=out, flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="one or more of %s, comma-separated" % ", ".join(MODELS))
    add_aggregation_arguments(ap)
    ap.add_argument("--steps", type=int, default=10, help="training steps per model, warm-up included (default 10)")
    ap.add_argument("--warmup", type=int, default=1, help="first steps not timed (default 1)")
    ap.add_argument("--batch-size", type=int, default=0, help="samples per step and rank (default: the model's)")
    ap.add_argument("--resolution", type=int, default=0, help="image models: input side in pixels (default: the model's)")
    ap.add_argument("--sequence-length", type=int, default=0,
                    help="bert_base: tokens per sequence, at most 512 (default %d)" % BERT_SEQUENCE)
    ap.add_argument("--lr", type=float, default=0.0, help="momentum SGD's learning rate (default: the model's)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--format", default="table", choices=["table", "json"])
    ap.add_argument("--rate-bps", type=int, default=None,
                    help="the links' rate when the ranks run in the emulated rack (reported as rate_bps)")
    args = ap.parse_args(argv)
    names = parse_models(args.model)
    if args.steps <= args.warmup or args.warmup < 0:
        raise SystemExit("--steps (%d) must be more than --warmup (%d), which is at least 0" % (args.steps, args.warmup))
    if args.batch_size < 0 or args.resolution < 0 or args.lr < 0 or not 0 <= args.sequence_length <= 512:
        raise SystemExit("--batch-size, --resolution and --lr must be positive, --sequence-length at most 512")

    vision = [n for n in names if MODELS[n].torchvision]
    torchvision = import_torchvision(vision) if vision else None  # before any rank joins: every rank stops alike

    torch.set_num_threads(1)
    dist.init_process_group(args.backend)
    rank, world = dist.get_rank(), dist.get_world_size()
    progress = sys.stderr if args.format == "json" else sys.stdout
    start = time.monotonic()
    if rank == 0:
        print("%d ranks, %s backend, hook %s, %d steps per model (%d untimed), torch %s%s; per rank:"
              % (world, args.backend, args.hook, args.steps, args.warmup, torch.__version__,
                 ", torchvision " + torchvision.__version__ if torchvision else ""), file=progress)
        for name in names:
            w = MODELS[name]
            print("  %s: batch %d of synthetic %s, SGD lr %g momentum 0.9" % (
                name, args.batch_size or w.batch_size, w.describe(args), args.lr or w.lr), file=progress)
        if args.format == "table":
            print("%-13s %9s %11s %11s %9s %6s %9s %9s %8s  %s" % ("model", "params", "gradients", "step", "samples/s",
                  "comm", "loss@1", "loss@N", "zero grad", "parameters"), flush=True)
    agent, identical = None, True
    for name in names:
        row, agent = train(name, args, rank, world, agent)
        row["torch_version"] = torch.__version__
        row["wall_seconds"] = time.monotonic() - start
        identical = identical and row["parameters_identical"]
        if rank == 0:
            if args.format == "json":
                print(json.dumps(row), flush=True)
            else:
                print_row(row, sys.stdout)
    if agent is not None:
        agent.close()
    group = dist.distributed_c10d._get_default_group()
    dist.barrier()
    if args.backend == "switchml":
        group.close()
    return 0 if identical else 2


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Gloo's teardown at interpreter exit (1.13) sometimes hangs after all work is done; nothing is left to clean up.
    os._exit(code)
