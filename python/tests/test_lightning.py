"""Lightning on the switchml backend, as a Lightning user runs it: `python script.py` with
Trainer(accelerator="cpu", devices=2, strategy=DDPStrategy(process_group_backend="switchml")), Lightning starting
the second rank, a switch that requires job secrets (lightning_ranks.py). PyTorch 2 only: Lightning 2.6 needs it
(the venv python/ci-torch2-venv makes has it; there, a missing Lightning fails the test)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

HERE = Path(__file__).resolve().parent

if int(torch.__version__.split(".")[0]) < 2:
    pytest.skip("Lightning 2.6 needs PyTorch 2 (this is %s)" % torch.__version__, allow_module_level=True)


def test_lightning_ddp_trains_two_ranks_through_the_switch(switch, tmp_path):
    env = dict(os.environ, SWITCHML_CONTROLLER=switch, PYTHONPATH=os.pathsep.join([str(HERE.parent), str(HERE)]),
               OMP_NUM_THREADS="1")
    for name in ("SWITCHML_JOB", "MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE"):
        env.pop(name, None)
    run = subprocess.run([sys.executable, str(HERE / "lightning_ranks.py")], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=240)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    ranks = sorted(re.findall(r"rank (\d) of 2 job (\S+) switched (\d+) first epoch's loss (\S+) last's (\S+) "
                              r"initial (\S+) digest (\S+)", run.stdout))
    assert [r[0] for r in ranks] == ["0", "1"], out
    (_, job, _, _, _, initial, params), other = ranks
    assert other[1] == job and other[6] == params, "the ranks' jobs or parameters differ: " + out
    assert initial != other[5], "the ranks should start from different parameters (DDP makes them rank 0's)"
    assert params != initial, "no training step changed the parameters: " + out
    assert all(int(r[2]) > 0 for r in ranks), "DDP's all-reduces did not reach the switchml group: " + out
    assert all(float(r[4]) < float(r[3]) for r in ranks), "the loss did not go down: " + out
    # The job the ranks were in is the one the switch served.
    assert "'%s'" % job in (tmp_path / "switch.log").read_text(), (tmp_path / "switch.log").read_text()
