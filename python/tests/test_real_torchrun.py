"""The backend under PyTorch's own torchrun, no wrapper: a running switch that requires job secrets (rank 0
makes one and hands it out through torchrun's store), SWITCHML_CONTROLLER, and `python3 -m
torch.distributed.run` (with --redirects 1 --tee 1, which torchrun 1.13 needs on Python 3.11)."""

import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import free_port

HERE = Path(__file__).resolve().parent


def test_the_backend_starts_under_pytorchs_own_torchrun(switch, tmp_path):
    port = free_port()
    env = dict(os.environ, SWITCHML_CONTROLLER=switch, PYTHONPATH=str(HERE.parent), OMP_NUM_THREADS="1")
    env.pop("SWITCHML_JOB", None)
    run = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--redirects", "1",
                          "--tee", "1", "--master_addr", "127.0.0.1", "--master_port", str(port), "--log_dir",
                          str(tmp_path / "logs"), str(HERE / "torchrun_ranks.py")],
                         env=env, capture_output=True, text=True, timeout=150)
    assert run.returncode == 0, run.stdout + run.stderr
    # torchrun's default run id is "none": the job is named after the rendezvous address.
    for rank in (0, 1):
        assert "rank %d ok torch-127.0.0.1:%d" % (rank, port) in run.stdout, run.stdout + run.stderr


def test_horovods_elastic_api_goes_on_from_the_last_commit_after_torchrun_restarts_the_ranks(switch, tmp_path):
    port = free_port()
    env = dict(os.environ, SWITCHML_CONTROLLER=switch, PYTHONPATH=str(HERE.parent), OMP_NUM_THREADS="1",
               SWITCHML_ELASTIC_DIR=str(tmp_path / "elastic"))
    env.pop("SWITCHML_JOB", None)
    run = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--max_restarts", "1",
                          "--redirects", "1", "--tee", "1", "--master_addr", "127.0.0.1", "--master_port", str(port),
                          "--log_dir", str(tmp_path / "logs"), str(HERE / "elastic_ranks.py")],
                         env=env, capture_output=True, text=True, timeout=240)
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    for rank in (0, 1):
        assert "rank %d attempt 0 starts at step 0" % rank in out, out
        # Rank 1 died after its third commit; rank 0 could not finish a fourth step without it.
        assert "rank %d attempt 1 starts at step 3" % rank in out, out
    done = re.findall(r"rank (\d) attempt 1 done: step 6 resets \[2\] losses 6 digest (\S+)", out)
    assert sorted(r for r, _ in done) == ["0", "1"], out
    assert done[0][1] == done[1][1], "parameters differ between ranks: " + out
    assert (tmp_path / "elastic").stat().st_mode & 0o777 == 0o700
