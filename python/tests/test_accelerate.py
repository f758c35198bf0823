"""Hugging Face Accelerate on the switchml backend: `python script.py` with Accelerate's notebook_launcher starting two
CPU processes, each making the switchml group itself before Accelerator(cpu=True), which keeps it and wraps the model
in DDP on it (accelerate_ranks.py; Accelerate refuses the name itself on CPU, docs/pytorch.md "Hugging Face
Accelerate"); a switch that requires job secrets. PyTorch 2 only: Accelerate 1.15 needs it (the venv
python/ci-torch2-venv makes has it; there, a missing Accelerate fails the test)."""

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent

if int(torch.__version__.split(".")[0]) < 2:
    pytest.skip("Accelerate 1.15 needs PyTorch 2 (this is %s)" % torch.__version__, allow_module_level=True)

import accelerate  # noqa: E402,F401  (the venv must have it: requirements-torch2.txt)

from trainer_checks import assert_trained_as_one_job  # noqa: E402


def test_accelerate_trains_two_ranks_through_the_switch_on_a_group_made_before_the_accelerator(switch, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, SWITCHML_CONTROLLER=switch, PYTHONPATH=os.pathsep.join([str(HERE.parent), str(HERE)]),
               OMP_NUM_THREADS="1")
    for name in ("SWITCHML_JOB", "MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                 "ACCELERATE_USE_CPU"):
        env.pop(name, None)
    process = subprocess.Popen([sys.executable, str(HERE / "accelerate_ranks.py"), str(out)], env=env, cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=240)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the launcher and its ranks
        output, _ = process.communicate(timeout=30)
        pytest.fail("Accelerate did not finish within 240 s: " + output[-20000:])
    assert process.returncode == 0, output[-20000:]
    ranks = [json.loads((out / ("rank-%d.json" % r)).read_text()) for r in range(2)]
    assert [r["rank"] for r in ranks] == [0, 1] and all(r["world_size"] == 2 for r in ranks), ranks
    assert all(r["distributed_type"] == "DistributedType.MULTI_CPU" and r["wrapper"] == "DistributedDataParallel"
               for r in ranks), "Accelerate did not train distributed on the group: %s" % ranks
    assert_trained_as_one_job(ranks, (tmp_path / "switch.log").read_text())
