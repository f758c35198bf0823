"""The tests start real agents: from the build (agent/target, as ./switchml runs them) unless
SWITCHML_JAVA and SWITCHML_CLASSPATH say otherwise; SWITCHML_COMMAND is the launcher (./switchml)."""

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))


def _build_classpath():
    """The agent's own class path, as ./switchml and switchml torchrun start it."""
    listed = ROOT / "agent/target/agent-classpath.txt"
    if not listed.is_file():
        pytest.exit("build the project first (mvn -B -pl cli -am -DskipTests package): %s is missing" % listed, returncode=2)
    return listed.read_text().strip()


@pytest.fixture(autouse=True)
def agent_environment(monkeypatch):
    if not (os.environ.get("SWITCHML_JAVA") and os.environ.get("SWITCHML_CLASSPATH")):
        monkeypatch.setenv("SWITCHML_JAVA", "java")
        monkeypatch.setenv("SWITCHML_CLASSPATH", _build_classpath())


@pytest.fixture
def launcher():
    return os.environ.get("SWITCHML_COMMAND", str(ROOT / "switchml"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def switch(launcher, tmp_path):
    """A switch on loopback that requires job secrets; its controller's address (for SWITCHML_CONTROLLER)."""
    log = tmp_path / "switch.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([launcher, "switch", "--bind", "127.0.0.1", "--controller-bind", "127.0.0.1",
                                    "--port", "0", "--controller-port", "0",
                                    "--require-job-secrets"], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            ready = re.search(r"ready: controller (\S+) ", log.read_text())
            if ready:
                yield ready.group(1)
                return
            assert process.poll() is None, log.read_text()
            time.sleep(0.2)
        pytest.fail("the switch did not start within 90 s: " + log.read_text())
    finally:
        process.terminate()
        process.wait(timeout=30)
