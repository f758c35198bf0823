"""Run by test_backend.py under `switchml torchrun --workers 2` with SWITCHML_LANES=16: float16, bfloat16 and
float32 all-reduces travel in 16-bit lanes; every rank gets the same bits, within 16-bit lanes' precision of the
exact sum, and prints "rank R ok"."""

import torch
import torch.distributed as dist

import switchml_torch  # noqa: F401 (registers the switchml backend)

dist.init_process_group("switchml")
rank, world = dist.get_rank(), dist.get_world_size()
g = torch.Generator().manual_seed(7)
base = [torch.randn(50_000, generator=g) for _ in range(world)]  # every rank's input, known to all
for dtype in (torch.float16, torch.bfloat16, torch.float32):
    exact = sum(b.to(dtype).float() for b in base)  # the sum of the inputs as the dtype holds them
    t = base[rank].to(dtype)
    dist.all_reduce(t)
    assert t.dtype == dtype
    # A block's largest value keeps 14 bits at 2 ranks (error <= 2^-13 of the block's maximum per term), and the
    # result is rounded to the dtype's own significand (float16 11 bits, bfloat16 8).
    ulp = {torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8, torch.float32: 2.0 ** -24}[dtype]
    tolerance = 2 * world * exact.abs().max().item() * 2.0 ** -14 + exact.abs() * ulp
    assert torch.all((t.float() - exact).abs() <= tolerance), (dtype, (t.float() - exact).abs().max())
    gathered = [torch.empty_like(t) for _ in range(world)]
    dist.all_gather(gathered, t)
    assert all(torch.equal(x, gathered[0]) for x in gathered), dtype
print(f"rank {rank} ok", flush=True)
dist.destroy_process_group()
