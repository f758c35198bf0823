"""One rank alone (a job of one): the agent's plumbing, its death, and this process's."""

import glob
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time

import pytest
import torch
import torch.distributed as dist

import switchml_torch


@pytest.fixture
def single_rank_group():
    store = tempfile.NamedTemporaryFile(delete=False)
    store.close()
    os.unlink(store.name)
    dist.init_process_group("gloo", init_method="file://" + store.name, rank=0, world_size=1)
    yield
    dist.destroy_process_group()


def test_tensors_in_flight_wrap_around_the_shared_memory_in_order(single_rank_group):
    agent = switchml_torch.start_agent(algo="ring", shm_bytes=4096)
    try:
        tensors = [torch.arange(i * 100, i * 100 + 250, dtype=torch.float32) for i in range(12)]
        futures = [agent.allreduce_async(t.clone(), op="sum") for t in tensors]
        for t, f in zip(tensors, futures):
            assert torch.equal(f.wait(), t)
        # Larger than the shared memory: reduced in parts of half of it, in order, contiguous or not.
        large = torch.arange(2000, dtype=torch.float32)
        assert torch.equal(agent.allreduce_async(large.clone(), op="sum").wait(), large)
        strided = torch.arange(4000, dtype=torch.float32).view(2000, 2).t()
        copy = strided.clone()
        result = agent.allreduce_async(strided, op="sum").wait()
        assert result is strided and torch.equal(strided, copy)
        assert torch.equal(agent.allreduce_async(torch.arange(1500, dtype=torch.int64) << 40, op="sum").wait(),
                           torch.arange(1500, dtype=torch.int64) << 40)
        with pytest.raises(TypeError, match="float32, .*int32.*not torch.bool"):
            agent.allreduce_async(torch.zeros(4, dtype=torch.bool))
    finally:
        agent.close()
    assert agent._process.returncode == 0


@pytest.mark.parametrize("algo", ["ps", "topk", "qsgd"])
def test_every_registered_algorithm_runs_through_the_agent(single_rank_group, algo):
    # The agent reads the JVM's registry of algorithms (switchml algorithms lists it): nothing here names them.
    agent = switchml_torch.start_agent(algo=algo)
    try:
        g = torch.Generator().manual_seed(7)
        x = torch.randn(5000, generator=g)
        result = agent.allreduce_async(x.clone(), op="sum").wait()
        assert result.shape == x.shape and torch.isfinite(result).all()
        if algo == "ps":
            assert torch.equal(result, x)
        elif algo == "topk":  # one rank: its own top 1 %, the largest magnitudes kept exactly
            kept = result.nonzero().flatten()
            assert 0 < len(kept) <= 100
            largest = x.abs().argmax()
            assert result[largest] == x[largest]
        else:  # QSGD: quantised to a few levels of each bucket's norm, each value's sign kept
            assert not torch.equal(result, x)
            assert (result * x >= 0).all() and result.count_nonzero() > 0
            assert len(result.abs().unique()) < 5000 // 10
        ints = torch.arange(-50, 50, dtype=torch.int32)
        assert torch.equal(agent.allreduce_async(ints.clone(), op="sum").wait(), ints)
    finally:
        agent.close()
    assert agent._process.returncode == 0


def test_an_unregistered_algorithm_is_refused_with_the_registered_names(single_rank_group):
    with pytest.raises(switchml_torch.AgentError, match="known: switchml, ring, ps, topk, qsgd"):
        switchml_torch.start_agent(algo="allgather")


def test_an_agent_that_dies_makes_the_call_raise_with_the_reason(single_rank_group):
    agent = switchml_torch.start_agent(algo="ring")
    try:
        agent._process.send_signal(signal.SIGKILL)
        agent._process.wait(timeout=30)
        with pytest.raises(Exception) as raised:
            agent.allreduce_async(torch.ones(10)).wait()
        assert "agent exited with code -9" in str(raised.value)
    finally:
        agent.close()


def test_an_agent_leaves_when_its_python_process_dies(tmp_path):
    child = textwrap.dedent("""
        import os, sys, torch.distributed as dist
        sys.path.insert(0, %r)
        import switchml_torch
        dist.init_process_group("gloo", init_method="file://%s", rank=0, world_size=1)
        agent = switchml_torch.start_agent(algo="ring")
        print(agent._process.pid, agent._shm_path, flush=True)
        os._exit(3)
    """ % (os.path.join(os.path.dirname(__file__), ".."), tmp_path / "store"))
    run = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert run.returncode == 3, run.stderr
    pid, shm = run.stdout.split()
    pid = int(pid)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            assert not os.path.exists(shm), "the agent left its shared memory behind"
            return
        time.sleep(0.1)
    pytest.fail("agent %d still runs 60 s after its Python process died" % pid)


def _jdk25():
    for release in sorted(glob.glob("/usr/lib/jvm/*/release")):
        if switchml_torch.agent.java_feature(os.path.join(os.path.dirname(release), "bin", "java")) >= 25:
            return os.path.join(os.path.dirname(release), "bin", "java")
    return None


@pytest.mark.parametrize("jdk", ["java", "25"])
def test_the_first_agent_leaves_its_classes_for_the_next_to_map(single_rank_group, tmp_path, monkeypatch, jdk):
    # On the tests' java, a dynamic AppCDS archive; on JDK 25, the ahead-of-time cache with the run's profiles.
    if jdk == "25":
        if _jdk25() is None:
            pytest.skip("no JDK 25 under /usr/lib/jvm for the ahead-of-time cache")
        monkeypatch.setenv("SWITCHML_JAVA", _jdk25())
    suffix = "aot" if switchml_torch.agent.java_feature(os.environ["SWITCHML_JAVA"]) >= 25 else "jsa"
    dump, load = {"jsa": ("-XX:ArchiveClassesAtExit", "-XX:SharedArchiveFile"),
                  "aot": ("-XX:AOTCacheOutput", "-XX:AOTCache=")}[suffix]
    # An archive of its own, beside a class path of its own (the build's, through a link in tmp_path).
    jars = os.environ["SWITCHML_CLASSPATH"].split(os.pathsep)
    os.symlink(jars[0], tmp_path / os.path.basename(jars[0]))
    monkeypatch.setenv("SWITCHML_CLASSPATH", os.pathsep.join([str(tmp_path / os.path.basename(jars[0]))] + jars[1:]))
    gone = subprocess.Popen(["true"])
    gone.wait()
    (tmp_path / ("agent-0.%s.%d-1.tmp" % (suffix, gone.pid))).write_bytes(b"left by a process that died while its agent dumped")
    for first in (True, False):
        agent = switchml_torch.start_agent(algo="ring")
        try:
            assert (dump if first else load) in " ".join(agent._process.args)
            t = torch.ones(100)
            assert torch.equal(agent.allreduce_async(t, op="sum").wait(), torch.ones(100))
            with open(agent._log_path, "rb") as log:
                logged = log.read().decode("utf-8", "replace")
        finally:
            agent.close()
        assert agent._process.returncode == 0
        assert [p.name for p in tmp_path.glob("agent-*")] == [agent._archive.path.name]
        assert "WARNING:" not in logged, logged
