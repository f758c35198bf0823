"""The switchml torch.distributed backend: two ranks under `switchml torchrun` (backend_ranks.py), and
what can be checked in one process (the job's name, dtype conversion, device staging)."""

import datetime
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import switchml_torch
from switchml_torch import agent as agent_module
from switchml_torch.agent import AgentError
from switchml_torch.backend import attempt_store, job_name, job_secret, launcher_job

HERE = Path(__file__).resolve().parent


def test_two_ranks_collectives_dtypes_ddp_and_half_precision_hook(launcher):
    # The arguments after the script, options included, reach it (backend_ranks.py checks sys.argv).
    run = subprocess.run([launcher, "torchrun", "--workers", "2", "--timeout", "PT150S", "--python", sys.executable,
                          str(HERE / "backend_ranks.py"), "--epochs", "1", "-x", "--name", "a b"],
                         capture_output=True, text=True, timeout=200)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "rank 0 ok" in run.stdout and "[rank 1] rank 1 ok" in run.stderr, run.stdout + run.stderr


def test_sixteen_bit_lanes_through_the_environment(launcher):
    env = dict(os.environ, SWITCHML_LANES="16")
    run = subprocess.run([launcher, "torchrun", "--workers", "2", "--timeout", "PT150S", "--python", sys.executable,
                          str(HERE / "lanes16_ranks.py")], capture_output=True, text=True, timeout=200, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "rank 0 ok" in run.stdout and "rank 1 ok" in run.stdout + run.stderr, run.stdout + run.stderr
    assert "laneBits=16" in run.stdout + run.stderr, "the job was installed with 16-bit lanes"


def test_the_backend_is_registered_on_import():
    import torch.distributed as dist
    assert switchml_torch.SwitchMLProcessGroup is not None
    assert dist.Backend("switchml") == "switchml"


JOB_NAMES = json.loads((HERE.parents[1] / "client/src/test/resources/launcher-job-names.json").read_text())["cases"]


@pytest.mark.parametrize("case", JOB_NAMES, ids=[json.dumps(c["env"], sort_keys=True) for c in JOB_NAMES])
def test_the_job_name_follows_the_rule_java_workers_follow(case):
    # The same cases as SwitchMLConfigTest's: Java and Python ranks of one launch meet in one job.
    assert launcher_job(case["env"]) == case["job"]
    if case["job"] is None:
        with pytest.raises(AgentError, match="no job name"):
            job_name(env=case["env"])
    else:
        assert job_name(env=case["env"]) == case["job"]
        assert job_name(env={**case["env"], "SWITCHML_JOB": "mine"}) == "mine"  # the user's name wins


def test_without_an_environment_rank_0_names_the_job_in_the_store(tmp_path):
    import torch.distributed as dist
    store = dist.FileStore(str(tmp_path / "store"), 1)
    name = job_name(store, 0, env={})
    assert name.startswith("torch-") and job_name(store, 1, env={}) == name


def test_the_job_secret_is_the_launchers_else_rank_0s_through_the_store(tmp_path):
    import torch.distributed as dist
    store = dist.FileStore(str(tmp_path / "store"), 1)
    assert job_secret("j", store, 0, env={"SWITCHML_JOB_SECRET": "from-the-launcher-0123456789"}) \
        == "from-the-launcher-0123456789"
    assert job_secret("j", store, 0, env={"SWITCHML_JOB_SECRET_FILE": "/run/secret"}) is None  # the agent reads it
    made = job_secret("j", store, 0, env={})
    assert len(made) >= 32 and job_secret("j", store, 1, env={}) == made
    assert job_secret("k", store, 0, env={}) != made  # every job its own


def test_after_a_torchrun_restart_the_agents_store_gets_the_attempts_prefix(tmp_path):
    import torch.distributed as dist
    store = dist.FileStore(str(tmp_path / "store"), 1)
    store.set("gloo-address", "of the dead attempt")
    static = {"TORCHELASTIC_USE_AGENT_STORE": "True"}
    assert attempt_store(store, env={**static, "TORCHELASTIC_RESTART_COUNT": "0"}) is store
    assert attempt_store(store, env={}) is store
    # A dynamic rendezvous: a fresh store every round, and nodes that count restarts differently.
    assert attempt_store(store, env={"TORCHELASTIC_USE_AGENT_STORE": "False", "TORCHELASTIC_RESTART_COUNT": "2"}) is store
    second = attempt_store(store, env={**static, "TORCHELASTIC_RESTART_COUNT": "1"})
    assert second is not store
    second.set_timeout(datetime.timedelta(milliseconds=200))
    with pytest.raises(RuntimeError):  # the dead attempt's keys are not seen (1.13's PrefixStore has no check())
        second.get("gloo-address")
    second.set("gloo-address", "of attempt 1")
    assert attempt_store(store, env={**static, "TORCHELASTIC_RESTART_COUNT": "1"}).get("gloo-address") == b"of attempt 1"
    assert store.get("gloo-address") == b"of the dead attempt"


def test_device_tensors_are_staged_through_host_memory():
    t = torch.arange(6, dtype=torch.float16).reshape(2, 3)
    host = agent_module.stage_to_host(t, pin=False)
    assert host.device.type == "cpu" and host.dtype == t.dtype and torch.equal(host, t)
    assert host.data_ptr() != t.data_ptr()  # a copy: the device tensor is written back only at the end
    host.mul_(2)
    assert agent_module.unstage_from_host(t, host) is t and torch.equal(t, torch.arange(6, dtype=torch.float16).reshape(2, 3) * 2)


@pytest.fixture(scope="module")
def lone_agent(tmp_path_factory):
    """A job of one (ring): the sum is the tensor itself, so conversions must round-trip exactly."""
    import os
    os.environ.setdefault("SWITCHML_JAVA", "java")
    if "SWITCHML_CLASSPATH" not in os.environ:
        from conftest import _build_classpath
        os.environ["SWITCHML_CLASSPATH"] = _build_classpath()
    agent = switchml_torch.start_agent(algo="ring", rank=0, world_size=1, exchange=lambda mine: [mine])
    yield agent
    agent.close()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int32,
                                   torch.int16, torch.int8, torch.uint8])
def test_each_dtype_round_trips(lone_agent, dtype):
    t = torch.arange(100).to(dtype)
    assert lone_agent.allreduce_async(t.clone(), op="sum").wait().dtype == dtype
    assert torch.equal(lone_agent.allreduce_async(t.clone(), op="sum").wait(), t)


def test_int64_beyond_int32_is_exact(lone_agent):
    t = torch.tensor([0, 1, -1, 2 ** 31, -(2 ** 31) - 5, 2 ** 62 + 12345, -(2 ** 63), 2 ** 63 - 1], dtype=torch.int64)
    assert torch.equal(lone_agent.allreduce_async(t.clone(), op="sum").wait(), t)
    assert torch.equal(lone_agent.allreduce_async(t.clone(), op="mean").wait(), t)


def test_non_contiguous_tensors_are_written_through_their_strides(lone_agent):
    base = torch.arange(20, dtype=torch.float32).reshape(4, 5)
    view = base[:, 1::2]
    assert not view.is_contiguous()
    result = lone_agent.allreduce_async(view, op="sum").wait()
    assert result is view and torch.equal(base, torch.arange(20, dtype=torch.float32).reshape(4, 5))


def test_the_staged_path_reduces_and_writes_back(lone_agent):
    t = torch.arange(10, dtype=torch.bfloat16)
    assert torch.equal(lone_agent._allreduce_staged(t, "sum", pin=False).wait(), torch.arange(10, dtype=torch.bfloat16))


def test_unsupported_dtypes_are_refused_by_name(lone_agent):
    with pytest.raises(TypeError, match="not torch.complex64"):
        lone_agent.allreduce_async(torch.zeros(3, dtype=torch.complex64))


@pytest.mark.parametrize("per_host", ["1", "0"])
def test_a_rank_that_dies_is_named_in_the_others_error(launcher, per_host):
    # per_host 1: both ranks share the host's agent, which tells rank 0 itself; 0: each its own, the controller tells.
    run = subprocess.run([launcher, "torchrun", "--workers", "2", "--timeout", "PT120S", "--python", sys.executable,
                          str(HERE / "crash_ranks.py"), "switchml"], capture_output=True, text=True, timeout=180,
                         env=dict(os.environ, SWITCHML_AGENT_PER_HOST=per_host))
    assert run.returncode == 137, run.stdout + run.stderr  # rank 1's SIGKILL
    error = [line for line in run.stdout.splitlines() if line.startswith("rank 0 error: ")]
    assert error, run.stdout + run.stderr
    # What happened (rank 1 died), not the advice for ranks that left cleanly after fewer steps.
    assert "because rank 1 died" in error[0] and "its process died or was killed" in error[0], error[0]
    assert "UnevenInputs" not in error[0] and "DJL" not in error[0], error[0]
    said = "this host's agent stopped" if per_host == "1" else "all-reduce 3 failed: job"
    assert error[0].startswith("rank 0 error: the agent failed: " + said), error[0]  # as the agent said it


def test_what_the_switch_cannot_do_is_refused_by_name():
    import torch.distributed as dist
    from switchml_torch.backend import SwitchMLProcessGroup
    assert SwitchMLProcessGroup._agent_op(None, dist.ReduceOp.SUM, "all_reduce") == "sum"
    assert SwitchMLProcessGroup._agent_op(None, dist.ReduceOp.AVG, "all_reduce") == "mean"
    assert SwitchMLProcessGroup._agent_op(None, dist.ReduceOp.MAX, "all_reduce") is None  # Gloo's
    with pytest.raises(ValueError, match="does not support ReduceOp.PREMUL_SUM; it supports SUM and AVG through the switch"):
        SwitchMLProcessGroup._agent_op(None, dist.ReduceOp.PREMUL_SUM, "all_reduce")


def test_a_failed_operations_wait_raises_the_agents_error_as_it_was():
    from switchml_torch.backend import _all, _work
    future = torch.futures.Future()
    work = _work(_all([future], [torch.ones(1)]))
    future.set_exception(switchml_torch.AgentError("the agent failed: rank 1 died"))
    assert work.is_completed() and not work.is_success()
    with pytest.raises(switchml_torch.AgentError) as raised:
        work.wait()
    assert str(raised.value) == "the agent failed: rank 1 died"  # not wrapped in then()'s callback error
    assert work.get_future().done()
