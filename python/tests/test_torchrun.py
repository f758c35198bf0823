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


@pytest.mark.parametrize("workers", [2, 4])
def test_a_hosts_ranks_share_one_agent(launcher, workers):
    run = subprocess.run([launcher, "torchrun", "--workers", str(workers), "--timeout", "PT120S",
                          "--python", sys.executable, str(HERE / "host_agent_ranks.py")],
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    for r in range(workers):
        assert "rank %d ok" % r in run.stdout + run.stderr, run.stdout + run.stderr


def test_when_the_first_rank_cannot_start_the_hosts_agent_the_others_hear_why(launcher):
    run = subprocess.run([launcher, "torchrun", "--workers", "2", "--timeout", "PT120S",
                          "--python", sys.executable, str(HERE / "leader_fails_ranks.py")],
                         capture_output=True, text=True, timeout=180)
    out = run.stdout + run.stderr
    assert "rank 0 error: [Errno 2] No such file or directory: '/nonexistent/java'" in out, out
    assert "rank 1 error: rank 0 could not start this host's agent: [Errno 2] No such file or directory" in out, out


def test_a_failing_rank_fails_the_launch(launcher, tmp_path):
    script = tmp_path / "fail.py"
    script.write_text("import os, sys\nsys.exit(7 if os.environ['RANK'] == '1' else 0)\n")
    run = subprocess.run([launcher, "torchrun", "--workers", "2", "--algo", "ring", "--python", sys.executable, str(script)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 7, run.stdout + run.stderr
    assert "rank 1 exited with code 7" in run.stderr


@pytest.mark.parametrize("hook", ["switchml", "gloo"])
def test_torch_train_prints_one_json_object_with_train_s_fields(launcher, hook):
    import json
    run = subprocess.run([launcher, "torch-train", "--workers", "2", "--epochs", "1", "--limit", "2048", "--hook", hook,
                          "--format", "json", "--python", sys.executable, "--timeout", "PT120S"],
                         capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 1, run.stdout
    result = json.loads(lines[0])
    for field in ("aggregation", "workers", "epochs", "batch_size", "test_accuracy", "images_per_s",
                  "aggregation_fraction", "parameters_identical", "rate_bps", "wall_seconds", "per_epoch"):
        assert field in result
    assert result["hook"] == hook and result["workers"] == 2 and result["parameters_identical"] is True
    assert result["rate_bps"] is None  # on this host, not in the rack
    assert len(result["per_epoch"]) == 1 and result["per_epoch"][0]["images"] == 2048
    assert (result["aggregation_fraction"] is None) == (hook == "gloo")
