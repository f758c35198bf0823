import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("algo", ["switchml", "ring"])
def test_ddp_ranks_agree_through_the_agent(launcher, algo):
    run = subprocess.run([launcher, "torchrun", "--workers", "2", "--algo", algo, "--timeout", "PT120S",
                          "--python", sys.executable, str(HERE / "ddp_ranks.py")],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "rank 0 ok" in run.stdout and "[rank 1] rank 1 ok" in run.stderr, run.stdout + run.stderr


def test_a_failing_rank_fails_the_launch(launcher, tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import os, sys\nsys.exit(7 if os.environ['RANK'] == '1' else 0)\n")
    run = subprocess.run([launcher, "torchrun", "--workers", "2", "--algo", "ring", "--python", sys.executable, str(script)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 7, run.stdout + run.stderr
    assert "rank 1 exited with code 7" in run.stderr
