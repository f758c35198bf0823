"""python/bench/models.py, the real-model harness, on its smallest model (MobileNet-V2, 3.5 M parameters) for a few
steps on 2 ranks: on Gloo and on the switchml backend through `switchml torch-train --model`, and with the comm hook
on a Gloo group under `switchml torchrun`, all with the same seed; on every PyTorch line, with or without torchvision,
a model that needs none (BERT-base's shape) through the switch and on Gloo, and the refusal of a torchvision model
where torchvision is missing or does not import. Not timed: the runs only have to finish."""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python" / "bench"))
import model_table  # noqa: E402 (python/bench/model_table.py)
import models  # noqa: E402 (python/bench/models.py)

MODEL = "mobilenet_v2"
STEPS = ["--steps", "3", "--batch-size", "4"]
FIELDS = ("model", "parameters", "gradient_bytes", "input", "batch_size", "optimizer", "steps", "warmup_steps", "workers",
          "backend", "hook", "aggregation", "step_seconds", "samples_per_s", "aggregation_fraction", "first_loss", "loss",
          "zero_gradient_fraction", "parameters_digest", "parameters_identical", "peak_rss_bytes", "rate_bps",
          "torch_version", "wall_seconds", "ddp_backward_compute_seconds", "ddp_allreduce_in_flight_seconds",
          "ddp_overlap_seconds", "ddp_idle_after_backward_seconds", "allreduce_in_flight_share", "overlapped_share")


def _require_torchvision():
    """MobileNet-V2 is torchvision's. On PyTorch 2 a torchvision that does not import skips the runs, saying why
    (torch 2.13.0+cpu: the local index's torchvision 0.28.0 fails with "operator torchvision::nms does not exist";
    issue 51, real models on 2.x); on 1.13 .ci/run installs Debian's, and its absence fails."""
    import torch
    try:
        import torchvision  # noqa: F401
    except Exception as e:
        if int(torch.__version__.split(".")[0]) < 2:
            raise
        pytest.skip("%s needs torchvision, which does not import on torch %s: %s: %s"
                    % (MODEL, torch.__version__, type(e).__name__, str(e).splitlines()[0] if str(e) else ""))


def _launcher():
    return os.environ.get("SWITCHML_COMMAND", str(ROOT / "switchml"))


def _one_row(command, env=None):
    run = subprocess.run(command, capture_output=True, text=True, timeout=400, env=env)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 1, run.stdout  # --format json: one object per model, the progress on standard error
    return json.loads(lines[0]), run.stderr


@pytest.fixture(scope="module")
def rows():
    """One run per way of aggregating: Gloo (the reference), the switchml backend, the hook through the switch."""
    _require_torchvision()
    launcher = _launcher()
    found = {}
    for backend in ("gloo", "switchml"):
        found[backend] = _one_row([launcher, "torch-train", "--model", MODEL, *STEPS, "--workers", "2", "--backend", backend,
                                   "--hook", "none", "--format", "json", "--python", sys.executable, "--timeout", "PT300S"])
    found["hook"] = _one_row([launcher, "torchrun", "--workers", "2", "--python", sys.executable, "--timeout", "PT300S",
                              str(ROOT / "python/bench/models.py"), "--model", MODEL, *STEPS, "--backend", "gloo",
                              "--hook", "switchml", "--format", "json"])
    return found


@pytest.mark.parametrize("way", ["gloo", "switchml", "hook"])
def test_every_rank_ends_with_the_same_parameters_and_a_finite_loss(rows, way):
    row, stderr = rows[way]
    assert set(FIELDS) <= set(row), sorted(set(FIELDS) - set(row))
    assert row["model"] == MODEL and row["workers"] == 2 and row["steps"] == 3 and row["batch_size"] == 4
    assert row["parameters"] == 3_504_872 and row["gradient_bytes"] == 4 * row["parameters"]
    assert row["parameters_identical"] is True and len(row["parameters_digest"]) == 64
    assert math.isfinite(row["first_loss"]) and math.isfinite(row["loss"])
    assert row["step_seconds"] > 0 and row["samples_per_s"] > 0 and row["rate_bps"] is None
    # Gloo's all-reduce is not timed (no agent carries it); an agent's in-flight share is one.
    if way == "gloo":
        assert row["aggregation_fraction"] is None
    else:
        assert 0 <= row["aggregation_fraction"] <= 1
    # DDP's own timers (issue 38's overlap): an all-reduce was in flight, part of it during backward.
    assert row["ddp_backward_compute_seconds"] > 0 and row["ddp_allreduce_in_flight_seconds"] > 0
    assert 0 < row["allreduce_in_flight_share"] and 0 <= row["overlapped_share"] <= 1
    assert row["ddp_idle_after_backward_seconds"] >= 0
    # The run says what it chose for the model's input.
    assert "mobilenet_v2: batch 4 of synthetic 3x64x64 images, 1000 classes" in stderr, stderr


@pytest.mark.parametrize("way", ["switchml", "hook"])
def test_the_loss_is_gloos_within_one_percent(rows, way):
    reference, row = rows["gloo"][0], rows[way][0]
    # The first step's loss comes before any all-reduce: the same parameters (rank 0's) and the same batches.
    assert row["first_loss"] == reference["first_loss"]
    # After that the sums differ only by rounding: Gloo adds float32, the switch block floating point (31-bit integers
    # scaled to each block's largest exponent). Seen: a relative difference of about 1e-7 after 3 steps.
    assert row["loss"] == pytest.approx(reference["loss"], rel=0.01)


def test_the_table_puts_each_run_beside_gloos_with_the_speedup_and_plots_it(rows, tmp_path):
    import xml.dom.minidom

    lines = [json.dumps(rows[way][0]) for way in ("gloo", "switchml", "hook")]
    table = model_table.table(model_table.read_rows([["progress line", *lines]])).splitlines()
    assert table[0].startswith("| model | parameters | gradients | ranks | links | aggregation | step, Gloo | step | speedup")
    gloo, switchml, hook = (rows[way][0] for way in ("gloo", "switchml", "hook"))
    assert len(table) == 4  # the header, its rule, and one comparison per aggregation against Gloo's run
    for line, other, name in ((table[2], switchml, "switchml"), (table[3], hook, "switchml hook")):
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert cells[:6] == [MODEL, "3.5 M", "14.0 MB", "2", "one host", name], cells
        assert cells[6] == "%.3f s" % gloo["step_seconds"] and cells[7] == "%.3f s" % other["step_seconds"]
        assert cells[8] == "%.2fx" % (gloo["step_seconds"] / other["step_seconds"])
        assert cells[14] == "yes"
    plot = tmp_path / "speedup.svg"
    model_table.plot(model_table.read_rows([lines]), str(plot))
    svg = xml.dom.minidom.parse(str(plot))
    bars = [r for r in svg.getElementsByTagName("rect") if r.getElementsByTagName("title")]
    assert len(bars) == 2  # one per comparison, each with its figure in its title
    assert bars[0].getElementsByTagName("title")[0].firstChild.data.startswith(MODEL + ", switchml, 2 ranks, one host: ")


def test_an_unknown_model_is_refused_with_the_scripts_models():
    run = subprocess.run([_launcher(), "torch-train", "--model", "alexnet"], capture_output=True, text=True, timeout=120)
    assert run.returncode != 0
    # torch-train's list (checked before any rank starts) is the script's.
    assert "unknown model alexnet (--model); known: " + ", ".join(models.MODELS) in run.stderr, run.stderr
    with pytest.raises(SystemExit, match="unknown model alexnet"):
        models.parse_models("resnet18,alexnet")


def test_torch_train_help_says_which_models_need_a_torchvision_that_imports():
    """`torch-train --help` lists torchvision's models beside ours, and says (as the README does) that they need a
    torchvision that imports, which torch 2.13's index lacks: there only the models that need none run."""
    run = subprocess.run([_launcher(), "torch-train", "--help"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    text = " ".join(run.stdout.split())  # picocli wraps the descriptions
    vision = [n for n, m in models.MODELS.items() if m.torchvision]
    others = [n for n, m in models.MODELS.items() if not m.torchvision]
    assert "--model" in text and ", ".join(vision) + " (torchvision's, so they need a torchvision that imports; on" \
        " torch 2.13 the index's does not), " + ", ".join(others) + "." in text, text
    assert "The torchvision models need a torchvision that imports with the ranks' torch: on torch 2.13 only " \
        + " and ".join(others) + " run" in text, text


def test_the_large_models_have_the_shapes_they_claim():
    """Built and run forward on a tiny batch, not trained (that takes minutes on 2 cores)."""
    import torch

    bert = models.BertBase()
    assert 109e6 < sum(p.numel() for p in bert.parameters()) < 111e6  # BERT-base: 110 M
    assert bert(torch.randint(0, 30522, (2, 8))).shape == (2, 2)
    del bert
    dlrm = models.Dlrm()
    tables = sum(t.weight.numel() for t in dlrm.tables)
    assert tables > 0.99 * sum(p.numel() for p in dlrm.parameters()) and tables == 64 * sum(models.Dlrm.ROWS)
    args = type("Args", (), {})()
    (dense, sparse), target = models.dlrm_batch(torch.Generator().manual_seed(0), 16, args)
    loss = models.MODELS["dlrm"].loss(dlrm(dense, sparse), target)
    loss.backward()
    zero_rows = int((dlrm.tables[0].weight.grad.abs().sum(1) == 0).sum())
    assert zero_rows >= models.Dlrm.ROWS[0] - 16  # a batch of 16 touches at most 16 of the big table's rows


def test_one_sum_of_a_real_gradient_through_the_switch_is_as_close_to_the_exact_sum_as_gloos():
    _require_torchvision()
    # An agent per rank makes a job of two workers: on one host a shared agent would sum without the switch.
    run = subprocess.run([_launcher(), "torchrun", "--workers", "2", "--python", sys.executable, "--timeout", "PT200S",
                          str(ROOT / "python/bench/sum_error.py"), "--model", MODEL], capture_output=True, text=True,
                         timeout=260, env=dict(os.environ, SWITCHML_AGENT_PER_HOST="0"))
    assert run.returncode == 0, run.stdout + run.stderr
    line = next(l for l in run.stdout.splitlines() if l.startswith("largest error against the float64 sum"))
    switch, gloo = (float(x) for x in line.split("relative to the largest sum: ")[1].rstrip(")").split(", "))
    # Block floating point keeps about 29 bits below each block's largest value, float32 24 below each element's:
    # measured on the largest sum both are float32 rounding (3.1e-8 of it for this model).
    assert switch < 1e-6 and gloo < 1e-6, line


def test_a_model_without_torchvision_trains_through_the_switch_to_gloos_loss():
    """bert_base needs no torchvision, so it runs on torch 2.13.0+cpu, whose index's torchvision does not import, as
    on 1.13. An agent per rank, so that the switch's job has both ranks as workers and the sums cross it."""
    row = {}
    for backend in ("gloo", "switchml"):
        row[backend], stderr = _one_row([_launcher(), "torch-train", "--model", "bert_base", "--steps", "2", "--workers",
                                         "2", "--backend", backend, "--hook", "none", "--format", "json", "--python",
                                         sys.executable, "--timeout", "PT300S"],
                                        env=dict(os.environ, SWITCHML_AGENT_PER_HOST="0"))
        assert row[backend]["parameters_identical"] is True and row[backend]["model"] == "bert_base", row[backend]
        assert ("installed job" in stderr and ": 2 workers," in stderr) == (backend == "switchml"), stderr
    gloo, switch = row["gloo"], row["switchml"]
    assert switch["aggregation_fraction"] > 0 and switch["torch_version"] == gloo["torch_version"]
    assert switch["first_loss"] == gloo["first_loss"]
    assert switch["loss"] == pytest.approx(gloo["loss"], rel=0.01) and switch["loss"] != switch["first_loss"]


def test_a_torchvision_model_without_torchvision_is_refused_naming_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "torchvision", None)  # import torchvision: ModuleNotFoundError
    with pytest.raises(SystemExit, match=r"^resnet18 needs torchvision, which is not installed on torch .*"
                                         r"train a model that needs none: bert_base, dlrm$"):
        models.import_torchvision(["resnet18"])


def test_a_torchvision_model_with_a_torchvision_that_does_not_import_stops_before_any_rank_joins(tmp_path):
    """As torch 2.13.0+cpu with the index's torchvision 0.28.0 (built for another torch) fails: models.py stops, naming
    the models and the error, before it makes a process group (no launcher, no switch needed)."""
    (tmp_path / "torchvision").mkdir()
    (tmp_path / "torchvision" / "__init__.py").write_text(
        'raise RuntimeError("operator torchvision::nms does not exist")\n')
    run = subprocess.run([sys.executable, str(ROOT / "python/bench/models.py"), "--model", "dlrm,resnet50,vgg11"],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT / "python")])))
    assert run.returncode == 1, run.stdout + run.stderr
    assert ("resnet50, vgg11 need torchvision, which does not import on torch %s (RuntimeError: operator "
            "torchvision::nms does not exist)" % __import__("torch").__version__) in run.stderr, run.stderr
