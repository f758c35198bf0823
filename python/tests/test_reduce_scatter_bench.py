"""python/bench/reduce_scatter.py at a small size on 2 ranks under `switchml torchrun`, an agent per rank (so that the
sums cross the switch): it runs, prints a time for each backend and the ratio, and every rank's part is the exact sum.
On 1.13, whose Gloo has no reduce-scatter, through the switch only, and the script's refusal of Gloo there. Not timed:
the figures are not checked."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "bench"))
import collective_timing  # noqa: E402 (python/bench/collective_timing.py)
import reduce_scatter  # noqa: E402 (python/bench/reduce_scatter.py)

TORCH2 = int(torch.__version__.split(".")[0]) >= 2


def _run(launcher, *args):
    return subprocess.run([launcher, "torchrun", "--workers", "2", "--python", sys.executable, "--timeout", "PT200S",
                           str(ROOT / "python/bench/reduce_scatter.py"), "--size", "1MiB", "--warmup", "1", "--iters",
                           "2", *args], capture_output=True, text=True, timeout=260,
                          env=dict(os.environ, SWITCHML_AGENT_PER_HOST="0"))


def test_each_ranks_part_is_the_exact_sum_through_the_switch_and_on_gloo(launcher):
    backends = ["switchml", "gloo"] if TORCH2 else ["switchml"]
    run = _run(launcher, "--backends", ",".join(backends), "--rate", "1gbit")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 ranks, 262144 float32 in (1.0 MiB), 131072 out per rank, links 1000000000 bit/s" in run.stdout, run.stdout
    for b in backends:
        assert re.search(r"^%s: median [0-9.]+ ms, p10 [0-9.]+, p90 [0-9.]+, [0-9.]+ x S/B$" % b, run.stdout, re.M), \
            run.stdout
    assert ("switchml/gloo time ratio" in run.stdout) == TORCH2, run.stdout
    assert "every rank's part is the exact sum on %s" % " and ".join(backends) in run.stdout, run.stdout
    assert ": 2 workers," in run.stderr, run.stderr  # the switch's job had both ranks as workers


@pytest.mark.skipif(TORCH2, reason="Gloo has a reduce-scatter on PyTorch 2")
def test_gloo_is_refused_on_1_13_saying_why(launcher):
    run = _run(launcher)
    assert run.returncode != 0
    assert "Gloo has no reduce-scatter on torch %s" % torch.__version__ in run.stderr, run.stderr


def test_the_inputs_sum_exactly_and_rates_and_sizes_read_as_tc_and_the_rack_write_them():
    world, count = 4, 1 << 12
    parts = [reduce_scatter.expected_part(r, world, count) for r in range(world)]
    whole = sum(reduce_scatter.values(r, 0, world * count) for r in range(world))
    assert torch.equal(torch.cat(parts), whole) and torch.equal(whole.float().double(), whole)
    assert (whole != 0).float().mean() > 0.99
    assert collective_timing.parse_rate("100mbit") == 100_000_000 and collective_timing.parse_rate("1gbit") == 10 ** 9
    assert collective_timing.parse_rate("100mbps") == 800_000_000 and collective_timing.parse_rate("2500") == 2500
    assert reduce_scatter.size_bytes("64MiB") == 64 << 20 and reduce_scatter.size_bytes("4096") == 4096
    with pytest.raises(SystemExit, match="cannot read the rate"):
        collective_timing.parse_rate("fast")
    with pytest.raises(SystemExit, match="cannot read the size"):
        reduce_scatter.size_bytes("64MB")
