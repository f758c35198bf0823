"""A new user's first run reads clean: `./switchml demo` on JDK 25 (the JDK it picks where one is installed)
prints no JVM warning (native access, sun.misc.Unsafe, incubator modules), no terminal colour codes and no empty
`[rank N]` line, through the demo's real launcher path (the script, the embedded switch, the worker JVMs)."""

import glob
import os
import re
import subprocess

import pytest


def _jdk25():
    for release in sorted(glob.glob("/usr/lib/jvm/*/release")):
        with open(release) as f:
            version = re.search(r'^JAVA_VERSION="(\d+)', f.read(), re.M)
        if version and int(version.group(1)) >= 25:
            return os.path.join(os.path.dirname(release), "bin", "java")
    return None


@pytest.mark.skipif(not os.path.isdir("/usr/share/datasets/fashion-mnist"),
                    reason="the demo's data: apt-get install dataset-fashion-mnist (.ci/run installs it)")
def test_the_demo_prints_no_jvm_warning_no_colour_codes_and_no_empty_rank_lines(launcher, monkeypatch, tmp_path):
    java = _jdk25()
    if java is None:
        pytest.skip("no JDK 25 under /usr/lib/jvm: the warnings this test keeps out are JDK 24+'s")
    monkeypatch.setenv("SWITCHML_JAVA", java)
    monkeypatch.delenv("SWITCHML_CLASSPATH", raising=False)
    monkeypatch.setenv("SWITCHML_AOT_DIR", str(tmp_path / "aot"))   # the run trains a fresh cache, as a first run does
    run = subprocess.run([launcher, "demo", "--epochs", "1", "--limit", "2000", "--workers", "2"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    out = run.stdout.decode("utf-8", "replace")
    assert run.returncode == 0, out
    assert "on JDK 25" in out or re.search(r"on JDK (2[5-9]|[3-9]\d)", out), out
    assert "parameters bit-identical" in out, out
    lines = out.splitlines()
    assert [l for l in lines if l.startswith("WARNING:") or "] WARNING:" in l] == [], out
    assert "\x1b[" not in out, out
    assert [l for l in lines if re.fullmatch(r"\[rank \d+\]\s*", l)] == [], out
    assert [l for l in lines if "AOT" in l or "JAVA_TOOL_OPTIONS" in l] == [], out
    assert glob.glob(str(tmp_path / "aot" / "worker-*.aot")), "the workers' first run wrote their cache"
