"""What the trainer tests (Ray Train, Accelerate) share: the ranks count the all-reduces that reach the switchml
group, and the test checks that the ranks trained as one job through the switch."""


def count_switched_allreduces():
    """Wraps the switchml group's allreduce to count its calls in this process; returns the one-element counter."""
    import switchml_torch

    switched = [0]
    allreduce = switchml_torch.SwitchMLProcessGroup.allreduce

    def counted_allreduce(self, tensors, opts=None):
        switched[0] += 1
        return allreduce(self, tensors, opts)
    switchml_torch.SwitchMLProcessGroup.allreduce = counted_allreduce
    return switched


def toy_problem(rank):
    """The trainers' data and model: the same 512 labelled points on every rank (the trainer's sampler gives each its
    part) and a small model whose initial parameters differ by rank (DDP makes them rank 0's)."""
    import torch
    import torch.nn as nn
    from torch.utils.data import TensorDataset

    torch.manual_seed(0)
    x = torch.randn(512, 20)
    data = TensorDataset(x, x[:, :3].argmax(1))  # labels a model can learn
    torch.manual_seed(rank + 1)
    return data, nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 3))


def assert_trained_as_one_job(ranks, switch_log):
    """Two ranks' results: one job (the one the switch served), different starts, identical trained parameters, all-reduces
    through the switchml group, the loss down."""
    first, second = ranks
    assert first["job"] == second["job"] and first["digest"] == second["digest"], \
        "the ranks' jobs or parameters differ: %s" % ranks
    assert first["initial"] != second["initial"], "the ranks should start from different parameters (DDP makes" \
                                                   " them rank 0's)"
    assert first["digest"] != first["initial"], "no training step changed the parameters: %s" % ranks
    assert all(r["switched"] > 0 for r in ranks), "DDP's all-reduces did not reach the switchml group: %s" % ranks
    assert all(r["last_loss"] < r["first_loss"] for r in ranks), "the loss did not go down: %s" % ranks
    assert "'%s'" % first["job"] in switch_log, switch_log
