import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def test_a_horovod_script_runs_with_its_import_changed(launcher):
    run = subprocess.run([launcher, "torchrun", "--workers", "2", "--timeout", "PT120S", "--python", sys.executable,
                          str(HERE / "horovod_ranks.py")], capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "rank 0 ok" in run.stdout and "[rank 1] rank 1 ok" in run.stderr, run.stdout + run.stderr


def test_elastic_state_restores_what_was_last_saved():
    import torch
    import switchml_torch.horovod as hvd

    state = hvd.elastic.ObjectState(epoch=1, seen=[1])
    state.epoch = 5
    state.seen.append(2)
    state.restore()  # uncommitted changes are undone
    assert (state.epoch, state.seen) == (1, [1])
    state.epoch = 2
    state.save()
    state.epoch = 9
    state.restore()
    assert state.epoch == 2

    model = torch.nn.Linear(2, 1)
    torch_state = hvd.elastic.TorchState(model, None, batch=0)
    before = [p.detach().clone() for p in model.parameters()]
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    torch_state.restore()
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
