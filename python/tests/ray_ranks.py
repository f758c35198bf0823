"""Run by test_ray.py as `python ray_ranks.py CONTROLLER OUT`, as a Ray user runs a script: a local Ray cluster
(ray.init()), a TorchTrainer with TorchConfig(backend="switchml") and two workers. Ray Train makes the process group
itself in each worker (dist.init_process_group("switchml")) before train_loop runs, so the workers must have
registered the backend by then: the job's runtime_env runs switchml_torch.backend.register in every Ray worker
process at its start (worker_process_setup_hook), and carries the switch's controller (SWITCHML_CONTROLLER) to them,
which is how the workers of a Ray cluster of several hosts find their switch too. Each worker trains a tiny model
three epochs under DDP (ray.train.torch.prepare_model) and writes OUT/rank-N.json: its group's job, how many
all-reduces it sent through the switch, its first and last epoch's mean loss and the digests of its initial and final
parameters."""

import json
import os
import sys
from pathlib import Path

import ray
import ray.train
import ray.train.torch
import torch
import torch.distributed as dist
import torch.nn as nn
from ray.train import RunConfig, ScalingConfig
from ray.train.torch import TorchConfig, TorchTrainer
from torch.utils.data import DataLoader


def train_loop(config):
    import switchml_torch
    from toy_ddp import digest

    group = dist.distributed_c10d._get_default_group()
    assert isinstance(group, switchml_torch.SwitchMLProcessGroup), type(group)
    from trainer_checks import count_switched_allreduces, toy_problem
    switched = count_switched_allreduces()

    context = ray.train.get_context()
    rank = context.get_world_rank()
    data, model = toy_problem(rank)
    before = digest(model)
    model = ray.train.torch.prepare_model(model)  # DDP, on the switchml group
    loader = ray.train.torch.prepare_data_loader(DataLoader(data, batch_size=32, shuffle=True))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    epochs = []
    for epoch in range(3):
        if ray.train.get_context().get_world_size() > 1:
            loader.sampler.set_epoch(epoch)
        losses = []
        for xb, yb in loader:
            loss = nn.functional.cross_entropy(model(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        epochs.append(sum(losses) / len(losses))
        ray.train.report({"epoch": epoch, "loss": epochs[-1]})
    result = dict(rank=rank, world_size=context.get_world_size(), job=group.job, switched=switched[0],
                  first_loss=epochs[0], last_loss=epochs[-1], initial=before, digest=digest(model),
                  controller=os.environ.get("SWITCHML_CONTROLLER"))
    Path(config["out"], "rank-%d.json" % rank).write_text(json.dumps(result))


def main(controller, out):
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 << 20,
             runtime_env={"worker_process_setup_hook": "switchml_torch.backend.register",
                          "env_vars": {"SWITCHML_CONTROLLER": controller, "OMP_NUM_THREADS": "1"}})
    try:
        trainer = TorchTrainer(train_loop, train_loop_config={"out": out},
                               torch_config=TorchConfig(backend="switchml"),
                               scaling_config=ScalingConfig(num_workers=2, use_gpu=False),
                               run_config=RunConfig(name="switchml", storage_path=str(Path(out, "results"))))
        result = trainer.fit()
        print("trained: %s" % (result.metrics,))
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main(sys.argv[1], str(Path(sys.argv[2]).resolve()))
