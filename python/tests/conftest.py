"""The tests start real agents: from the build (agent/target, as ./switchml runs them) unless
SWITCHML_JAVA and SWITCHML_CLASSPATH say otherwise; SWITCHML_COMMAND is the launcher (./switchml)."""

import os
import sys
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
