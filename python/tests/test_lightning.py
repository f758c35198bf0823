"""Lightning on the switchml backend, as a Lightning user runs it: `python script.py` with
Trainer(accelerator="cpu", devices=2, strategy=DDPStrategy(process_group_backend="switchml")), Lightning starting
the second rank, a switch that requires job secrets (lightning_ranks.py); and FSDPStrategy the same way, on CPU with
the two workarounds docs/pytorch.md gives. PyTorch 2 only: Lightning 2.6 needs it
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


def _train(switch, tmp_path, *args):
    """lightning_ranks.py's two ranks; their lines (rank, job, switched, first loss, last loss, initial, digest)."""
    env = dict(os.environ, SWITCHML_CONTROLLER=switch, PYTHONPATH=os.pathsep.join([str(HERE.parent), str(HERE)]),
               OMP_NUM_THREADS="1")
    for name in ("SWITCHML_JOB", "MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE"):
        env.pop(name, None)
    run = subprocess.run([sys.executable, str(HERE / "lightning_ranks.py"), *args], env=env, cwd=tmp_path,
                         capture_output=True, text=True, timeout=240)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    ranks = sorted(re.findall(r"rank (\d) of 2 job (\S+) switched (\d+) first epoch's loss (\S+) last's (\S+) "
                              r"initial (\S+) digest (\S+)", run.stdout))
    assert [r[0] for r in ranks] == ["0", "1"], out
    (_, job, _, _, _, initial, params), other = ranks
    assert other[1] == job and other[6] == params, "the ranks' jobs or parameters differ: " + out
    assert initial != other[5], "the ranks should start from different parameters (rank 0's are made everyone's)"
    assert params != initial, "no training step changed the parameters: " + out
    assert all(int(r[2]) > 0 for r in ranks), "the gradients' reductions did not reach the switchml group: " + out
    assert all(float(r[4]) < float(r[3]) for r in ranks), "the loss did not go down: " + out
    # The job the ranks were in is the one the switch served.
    assert "'%s'" % job in (tmp_path / "switch.log").read_text(), (tmp_path / "switch.log").read_text()
    return ranks


def test_lightning_ddp_trains_two_ranks_through_the_switch(switch, tmp_path):
    _train(switch, tmp_path)


def test_lightning_fsdp_on_cpu_reduce_scatters_through_the_switch_to_ddps_parameters(switch, tmp_path):
    """FSDPStrategy(process_group_backend="switchml") on CPU, past Lightning's and FSDP1's refusals of CPU as
    lightning_ranks.py says: the gradients reduce-scattered through the switch (the count is of reduce-scatters), and
    the parameters at the end exactly those DDP's all-reduces through the switch give, the same data and start."""
    fsdp = _train(switch, tmp_path, "fsdp")
    ddp = _train(switch, tmp_path)
    assert fsdp[0][6] == ddp[0][6], "FSDP's parameters differ from DDP's: %s vs %s" % (fsdp, ddp)
    assert [r[3:6] for r in fsdp] == [r[3:6] for r in ddp], "the losses differ from DDP's: %s vs %s" % (fsdp, ddp)
