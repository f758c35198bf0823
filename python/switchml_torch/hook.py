"""The DDP communication hook."""

import torch


def allreduce_hook(agent, bucket):
    """Averages the bucket over all ranks through ``agent``; register it with
    ``ddp_model.register_comm_hook(agent, allreduce_hook)``. Returns a future of the averaged
    bucket, so DDP's backward pass goes on while the agent aggregates. float16 and bfloat16 buckets
    (half-precision parameters) are averaged as float32 and converted back."""
    # buffer() since PyTorch 1.10; get_tensor() before.
    tensor = bucket.buffer() if hasattr(bucket, "buffer") else bucket.get_tensor()
    return agent.allreduce_async(tensor, op="mean")
