"""PyTorch's own distributed test suite on the switchml backend: the ``DistributedTest`` base of
``torch.testing._internal.distributed.distributed_test`` (what PyTorch's ``test_distributed_spawn.py`` runs for Gloo),
at world size 2 (``--world-size N`` for another), every test in fresh processes with ``init_process_group("switchml")`` (file:// rendezvous, a
job of its own at the switch). Run it under the launcher, which starts the switch and says where it is:

    ./switchml torchrun --workers 1 --timeout PT3600S python/bench/torch_suite.py [-k PATTERN] [-v]

Tests that PyTorch gates on the backend's name (``gloo``, ``nccl``) are skipped as they are for any other backend; it
prints unittest's summary (ran, failures, errors, skips). With ``--record FILE`` it also writes every test's outcome
there, a JSON line each (test, outcome: pass, fail, error, skip, and the skip's reason or the error's last line), which
``torch_suite_table.py`` turns into the per-test table of two runs (switchml and Gloo). Nothing here is switchml's own test: it is the yardstick of
issue 38 (compatibility with what PyTorch's suite expects of a backend)."""

import json
import os
import sys
import tempfile
import types
import unittest

try:
    import expecttest  # noqa: F401
except ImportError:
    # PyTorch's test utilities derive their TestCase from expecttest's (inline expectations, which none of these tests
    # use); Debian packages no expecttest, so a plain unittest.TestCase stands in for it.
    sys.modules["expecttest"] = types.ModuleType("expecttest")
    sys.modules["expecttest"].TestCase = unittest.TestCase
    sys.modules["expecttest"].ACCEPT = False

# The launcher's variables describe its one rank: each test's two processes are a job of their own.
for name in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_PORT", "SWITCHML_JOB",
             "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT"):
    os.environ.pop(name, None)
os.environ.setdefault("BACKEND", "switchml")  # BACKEND=gloo runs the same tests on Gloo, to compare
# World size 2 unless the command line says --world-size N (PyTorch's suite reads WORLD_SIZE before any test runs).
if "--world-size" in sys.argv:
    _at = sys.argv.index("--world-size")
    os.environ["WORLD_SIZE"] = str(int(sys.argv[_at + 1]))
    del sys.argv[_at:_at + 2]
else:
    os.environ["WORLD_SIZE"] = "2"
os.environ.setdefault("TEMP_DIR", tempfile.mkdtemp(prefix="switchml-torch-suite-"))

import switchml_torch  # noqa: E402,F401 (registers the backend; spawned children import this module again)
from torch.testing._internal.distributed.distributed_test import DistributedTest, TestDistBackend  # noqa: E402


class TestBackend(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        self._spawn_processes()


class _Recording(unittest.TextTestResult):
    """unittest's result, each test's outcome also appended to the --record file (as it ends: a run cut short keeps
    what it did)."""
    record = None

    def _write(self, test, outcome, detail=""):
        if self.record:
            with open(self.record, "a") as out:
                out.write(json.dumps({"test": test.id().rsplit(".", 1)[-1], "outcome": outcome,
                                      "detail": detail}) + "\n")

    def addSuccess(self, test):
        super().addSuccess(test)
        self._write(test, "pass")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._write(test, "fail", _last_line(self._exc_info_to_string(err, test)))

    def addError(self, test, err):
        super().addError(test, err)
        self._write(test, "error", _last_line(self._exc_info_to_string(err, test)))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._write(test, "skip", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._write(test, "expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._write(test, "unexpected success")


def _last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else ""


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--record" in args:
        at = args.index("--record")
        _Recording.record = os.path.abspath(args[at + 1])
        del args[at:at + 2]
    unittest.main(argv=[sys.argv[0], *args], testRunner=unittest.TextTestRunner(resultclass=_Recording))
