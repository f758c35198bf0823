"""Run by test_backend.py under `switchml torchrun --workers 2 crash_ranks.py ALGO`: rank 1 dies (SIGKILL) after
some all-reduces, while rank 0 waits in its next one; rank 0 prints the error that all-reduce raises, as
"rank 0 error: ..."."""

import os
import signal
import sys
import time

import torch
import torch.distributed as dist

import switchml_torch

os.environ["SWITCHML_ALGO"] = sys.argv[1]
dist.init_process_group("switchml")
rank = dist.get_rank()
for step in range(3):
    dist.all_reduce(torch.ones(1000))
if rank == 1:
    time.sleep(1.0)  # rank 0 is in its next all-reduce by then
    os.kill(os.getpid(), signal.SIGKILL)
try:
    for step in range(3):
        dist.all_reduce(torch.ones(1000))
    print("rank 0 error: none", flush=True)
except Exception as e:
    print("rank 0 error: %s" % str(e).replace("\n", " | "), flush=True)
dist.distributed_c10d._get_default_group().close()  # removes the agent's files (os._exit skips atexit)
os._exit(0)
