"""``switchml torch-train --rack``: every rank in its own namespace of the emulated rack, behind a shaped link,
so that DDP's traffic (the switch's UDP, or Gloo's TCP) crosses the network. Needs root; skipped otherwise. The
launcher removes the rack (namespaces, links, and what runs in them) when the run ends."""

import json
import os
import shutil
import subprocess
import sys

import pytest


@pytest.mark.parametrize("backend", ["switchml", "gloo"])
def test_ddp_trains_across_the_racks_namespaces(launcher, backend):
    if os.geteuid() != 0:
        pytest.skip("needs root: the rack's hosts are network namespaces")
    if shutil.which("ip") is None or shutil.which("tc") is None:
        pytest.skip("needs ip and tc (iproute2) for the rack")
    run = subprocess.run([launcher, "torch-train", "--rack", "--rate", "1gbit", "--workers", "2", "--epochs", "1",
                          "--limit", "2048", "--backend", backend, "--hook", "none", "--format", "json",
                          "--python", sys.executable, "--timeout", "PT150S"],
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["backend"] == backend and result["workers"] == 2 and result["parameters_identical"] is True
    assert result["rate_bps"] == 1_000_000_000
    assert "emulated rack" in run.stderr and "links 1000000000 bit/s" in run.stderr, run.stderr
    # The switch on the fabric formed the job only for the switchml backend (Gloo's ranks need none).
    assert ("installed job" in run.stderr) == (backend == "switchml"), run.stderr
    prefix = run.stderr.split("emulated rack ", 1)[1].split(":", 1)[0]
    namespaces = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert prefix not in namespaces, "the rack's namespaces were left behind: " + namespaces


def test_hosts_of_two_ranks_send_one_contribution_each(launcher):
    """Two hosts of two ranks (--ranks-per-host 2): each host's ranks share one agent, so the switch's job has two
    workers, and DDP's parameters end identical on all four ranks."""
    if os.geteuid() != 0:
        pytest.skip("needs root: the rack's hosts are network namespaces")
    if shutil.which("ip") is None or shutil.which("tc") is None:
        pytest.skip("needs ip and tc (iproute2) for the rack")
    run = subprocess.run([launcher, "torch-train", "--rack", "--rate", "1gbit", "--ranks-per-host", "2", "--workers", "4",
                          "--epochs", "1", "--limit", "2048", "--backend", "switchml", "--hook", "none", "--format", "json",
                          "--python", sys.executable, "--timeout", "PT150S"],
                         capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["workers"] == 4 and result["parameters_identical"] is True, result
    assert "4 ranks on 2 hosts of 2 behind one link each" in run.stderr, run.stderr
    installed = [line for line in run.stderr.splitlines() if "installed job" in line]
    assert installed and all(": 2 workers," in line for line in installed), installed
