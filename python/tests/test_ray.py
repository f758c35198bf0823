"""Ray Train on the switchml backend, as a Ray user runs it: `python script.py` with a local Ray cluster (ray.init()),
TorchTrainer(train_loop, torch_config=TorchConfig(backend="switchml"), scaling_config=ScalingConfig(num_workers=2)),
a switch that requires job secrets (ray_ranks.py). The switch's controller reaches the workers only through the job's
runtime_env (not the driver's environment), as on a cluster of several hosts. PyTorch 2 only: Debian has no Ray for
its 1.13 line, and the venv python/ci-torch2-venv makes has Ray (there, a missing Ray fails the test)."""

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
    pytest.skip("Ray Train is tested in the PyTorch 2 venv only (Debian, whose PyTorch is %s, packages no Ray)"
                % torch.__version__, allow_module_level=True)

import ray  # noqa: E402,F401  (the venv must have it: requirements-torch2.txt)

from trainer_checks import assert_trained_as_one_job  # noqa: E402


def test_ray_train_torch_trainer_trains_two_workers_through_the_switch(switch, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent), str(HERE)]), OMP_NUM_THREADS="1",
               RAY_USAGE_STATS_ENABLED="0")
    for name in ("SWITCHML_CONTROLLER", "SWITCHML_JOB", "MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK",
                 "WORLD_SIZE", "RAY_ADDRESS"):
        env.pop(name, None)
    process = subprocess.Popen([sys.executable, str(HERE / "ray_ranks.py"), switch, str(out)], env=env, cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the driver and the local Ray cluster it started
        output, _ = process.communicate(timeout=30)
        pytest.fail("Ray Train did not finish within 300 s: " + output[-20000:])
    assert process.returncode == 0, output[-20000:]
    ranks = [json.loads((out / ("rank-%d.json" % r)).read_text()) for r in range(2)]
    assert [r["rank"] for r in ranks] == [0, 1] and all(r["world_size"] == 2 for r in ranks), ranks
    assert all(r["controller"] == switch for r in ranks), "the runtime_env did not carry the controller: %s" % ranks
    assert_trained_as_one_job(ranks, (tmp_path / "switch.log").read_text())
