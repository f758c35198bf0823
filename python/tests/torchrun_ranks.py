"""Run by test_real_torchrun.py under PyTorch's own torchrun (python -m torch.distributed.run), with only
SWITCHML_CONTROLLER (and how to run the agent) set: the backend's job name and defaults come from torchrun's
environment. Every rank prints "rank R ok JOB"."""


import torch
import torch.distributed as dist

import switchml_torch

dist.init_process_group("switchml")
rank = dist.get_rank()
t = torch.full((1000,), float(rank + 1))
dist.all_reduce(t)
assert torch.all(t == 3), t[:4]
print("rank %d ok %s" % (rank, switchml_torch.backend.job_name()), flush=True)
dist.destroy_process_group()  # the agent leaves at exit (atexit)
