"""Run by test_torchrun.py under `switchml torchrun --workers 2`: rank 0, which starts the host's agent, cannot (its
java does not exist); rank 1, which would attach to it, must fail too, naming rank 0 and why, not wait."""

import os

import torch.distributed as dist

import switchml_torch

if os.environ["RANK"] == "0":
    os.environ["SWITCHML_JAVA"] = "/nonexistent/java"
try:
    dist.init_process_group("switchml")
    print("rank %s error: none" % os.environ["RANK"], flush=True)
except Exception as e:
    print("rank %s error: %s" % (os.environ["RANK"], str(e).replace("\n", " | ")), flush=True)
os._exit(0)
