"""reduce_scatter_tensor time of one float32 tensor (default 64 MiB) at every rank, through the switch (the switchml
group: the whole tensor all-reduced, this rank's part kept) and on Gloo (a new_group(backend="gloo") of the same ranks),
in one run, taking turns, with no training around it: what FSDP's gradient reduce-scatters cost on each.

Run under a launcher with PyTorch 2 (1.13's Gloo has no reduce-scatter), e.g.
`switchml torchrun --workers 4 --python python/.venv-torch2/bin/python python/bench/reduce_scatter.py`, or in the
emulated rack, each rank behind a link of rate R (root): `switchml torchrun --rack --rate R --workers 4 --python ...
python/bench/reduce_scatter.py --rate R` (the script's own --rate only to print the times in S/B, S the input's bytes,
B the link rate: a switch's all-reduce needs at least S/B, a ring's reduce-scatter (N-1)/N S/B). Rank 0 prints, per
backend, the median and the 10th and 90th percentiles of the timed calls after warm-up calls, then the switch's time
over Gloo's. Every call scatters the same input, values whose sums every backend gets exactly (multiples of 2^-12 below
8 in magnitude); after the timed calls every rank checks its part against the sum it computes itself, and the run fails
(exit code 3) where one differs."""

import argparse
import re
import sys

import torch
import torch.distributed as dist

import switchml_torch  # noqa: F401 (registers the switchml backend)
from collective_timing import finish, parse_rate, quantile_ms, summary, time_in_turns

BACKENDS = ("switchml", "gloo")
# 2.13 calls reduce_scatter_tensor deprecated in favour of reduce_scatter_single (the same signature); 1.13 has the first.
REDUCE_SCATTER = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor


def size_bytes(text):
    """``64MiB``, ``512KiB``, ``1GiB`` or a plain number of bytes; a SystemExit saying how to write it otherwise."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)\s*([kmg]ib)?", text.strip().lower())
    if not m:
        raise SystemExit("cannot read the size %r; write e.g. 64MiB, 512KiB or a number of bytes" % text)
    return int(float(m.group(1)) * {"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, None: 1}[m.group(2)])


def values(rank, start, count):
    """Rank ``rank``'s input elements ``start`` to ``start + count``: a hash of the index and the rank, as multiples of
    2^-12 in [-8, 8), so that any sum of up to 512 of them is exact in float32 and in the switch's block floating
    point, and almost none is zero (the switch skips blocks zero at every rank)."""
    j = torch.arange(start, start + count, dtype=torch.int64)
    return (((j * 2654435761 + (rank + 1) * 40503) % 65521) - 32760).to(torch.float64) / 4096


def expected_part(rank, world, count):
    """The sum over every rank of the elements of ``rank``'s part, in float64."""
    return sum(values(r, rank * count, count) for r in range(world))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="64MiB", help="the input's bytes at every rank (default 64MiB), float32")
    ap.add_argument("--backends", default=",".join(BACKENDS), help="switchml, gloo or both (default), in turns")
    ap.add_argument("--warmup", type=int, default=2, help="untimed rounds first (default 2)")
    ap.add_argument("--iters", type=int, default=10, help="timed rounds (default 10)")
    ap.add_argument("--rate", help="the links' rate (e.g. 1gbit, as given to --rack --rate) to print x S/B")
    args = ap.parse_args(argv)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    if not backends or any(b not in BACKENDS for b in backends):
        raise SystemExit("--backends: one or both of %s, not %r" % (", ".join(BACKENDS), args.backends))
    if "gloo" in backends and int(torch.__version__.split(".")[0]) < 2:
        raise SystemExit("Gloo has no reduce-scatter on torch %s (\"ProcessGroupGloo does not support reduce_scatter\");"
                         " run this with PyTorch 2 (--python python/.venv-torch2/bin/python), or --backends switchml"
                         % torch.__version__)
    if args.iters < 1 or args.warmup < 0:
        raise SystemExit("--iters must be at least 1 and --warmup at least 0")
    rate = parse_rate(args.rate) if args.rate else None
    nbytes = size_bytes(args.size)

    torch.set_num_threads(1)
    dist.init_process_group(backends[0] if backends == ["gloo"] else "switchml")
    rank, world = dist.get_rank(), dist.get_world_size()
    if nbytes % (4 * world) or nbytes <= 0:
        raise SystemExit("--size %s: %d bytes is not a positive multiple of %d ranks' float32" % (args.size, nbytes, world))
    default = dist.distributed_c10d._get_default_group()
    groups = {"switchml": default, "gloo": default if backends == ["gloo"] else dist.new_group(backend="gloo")}
    elements = nbytes // 4
    part = elements // world
    base = values(rank, 0, elements).float()
    inputs = {b: torch.empty(elements) for b in backends}
    outputs = {b: torch.empty(part) for b in backends}

    def turn(b):
        return (lambda: inputs[b].copy_(base),
                lambda: REDUCE_SCATTER(outputs[b], inputs[b], group=groups[b]))
    if rank == 0 and "switchml" in backends and len(default.agent.local_ranks or ()) > 1:
        print("note: this host's %d ranks share one agent, whose sum is the host's: nothing crosses the switch"
              " (SWITCHML_AGENT_PER_HOST=0 gives every rank its own agent)" % len(default.agent.local_ranks),
              file=sys.stderr, flush=True)
    times = time_in_turns({b: turn(b) for b in backends}, args.warmup, args.iters)

    expected = expected_part(rank, world, part)
    wrong = {b: float((outputs[b].double() - expected).abs().max()) for b in backends}
    wrong = {b: e for b, e in wrong.items() if e != 0}
    everyone = [None] * world
    dist.all_gather_object(everyone, wrong)
    if rank == 0:
        line_rate = "" if rate is None else ", links %d bit/s" % rate
        print("%d ranks, %d float32 in (%.1f MiB), %d out per rank%s; %d timed rounds after %d" % (
            world, elements, nbytes / (1 << 20), part, line_rate, args.iters, args.warmup), flush=True)
        for b in backends:
            bound = "" if rate is None else ", %.3f x S/B" % (quantile_ms(times[b], 0.5) / 1e3 / (8 * nbytes / rate))
            print("%s: %s%s" % (b, summary(times[b]), bound), flush=True)
        if len(backends) == 2:
            ratio = quantile_ms(times["switchml"], 0.5) / quantile_ms(times["gloo"], 0.5)
            print("switchml/gloo time ratio %.3f (Gloo's time over the switch's %.3f)" % (ratio, 1 / ratio), flush=True)
        for r, errors in enumerate(everyone):
            for b, error in errors.items():
                print("rank %d's part on %s differs from the exact sum by up to %g" % (r, b, error), flush=True)
        if not any(everyone):
            print("every rank's part is the exact sum on %s" % " and ".join(backends), flush=True)
    return 3 if any(everyone) else 0


if __name__ == "__main__":
    finish(main())
