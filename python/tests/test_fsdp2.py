"""FSDP2 (fully_shard) on CPU through the switch, against Gloo: python/bench/fsdp2.py at 2 and 4 ranks under `switchml
torchrun`, a small transformer trained the same steps from the same start on the switchml group and on a Gloo group
of the same ranks. An agent per rank (SWITCHML_AGENT_PER_HOST=0), so that the job at the switch has a worker per rank
and the sums cross it. PyTorch 2 only: 1.13 has no FSDP2. Not timed (on a loaded 2-core machine the 4-rank run took
47 s, switch and agents started included)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]

if int(torch.__version__.split(".")[0]) < 2:
    pytest.skip("FSDP2 (fully_shard) needs PyTorch 2.4 or later (this is %s)" % torch.__version__,
                allow_module_level=True)


@pytest.mark.parametrize("workers", [2, 4])
def test_fsdp2_reduce_scatters_through_the_switch_to_gloos_loss(launcher, workers):
    run = subprocess.run([launcher, "torchrun", "--workers", str(workers), "--python", sys.executable, "--timeout", "PT240S",
                          str(ROOT / "python/bench/fsdp2.py")], capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, SWITCHML_AGENT_PER_HOST="0"))
    assert run.returncode == 0, run.stdout + run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert len(lines) == 3, run.stdout
    switch, gloo, comparison = lines
    assert (switch["backend"], gloo["backend"]) == ("switchml", "gloo")
    # FSDP2's gradients reached the switchml group as reduce-scatters (three per step: one per sharded module), and
    # the Gloo run's went to its own group.
    assert switch["switched_reduce_scatters"] >= switch["steps"], switch
    assert gloo["switched_reduce_scatters"] == 0, gloo
    # The switch's job had every rank as a worker: the sums crossed it.
    assert ": %d workers," % workers in run.stderr, run.stderr
    for row in (switch, gloo):
        assert row["workers"] == workers and row["parameters_identical"] is True, row
        assert row["loss"] < row["first_loss"], "the loss did not go down: %s" % row
    # The first step's loss comes before any reduction: the same start and data on both.
    assert switch["first_loss"] == gloo["first_loss"]
    assert switch["loss"] == pytest.approx(gloo["loss"], rel=0.005), comparison
    assert comparison["loss_ratio"] == pytest.approx(switch["loss"] / gloo["loss"])
