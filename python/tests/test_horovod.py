import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_a_horovod_script_runs_with_its_import_changed(launcher):
    run = subprocess.run([launcher, "torchrun", "--workers", "2", "--timeout", "PT120S", "--python", sys.executable,
                          str(HERE / "horovod_ranks.py")], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "rank 0 ok" in run.stdout and "[rank 1] rank 1 ok" in run.stderr, run.stdout + run.stderr
