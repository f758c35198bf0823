"""The small DDP model the rank scripts train, and the digest they compare across ranks."""

import hashlib

import torch
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel


def model():
    """A 20-64-3 perceptron under DDP, in buckets small enough for several per step."""
    return DistributedDataParallel(nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 3)), bucket_cap_mb=0.004)


def train(ddp, steps):
    """SGD steps, each on a fresh batch from this rank's own random generator."""
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for _ in range(steps):
        loss = nn.functional.cross_entropy(ddp(torch.randn(32, 20)), torch.randint(0, 3, (32,)))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def digest(module):
    """Of the parameters' values, half-precision ones widened to float32 (numpy has no bfloat16)."""
    return hashlib.sha256(b"".join(p.detach().float().numpy().tobytes() for p in module.parameters())).hexdigest()
