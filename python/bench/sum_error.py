"""How exact one all-reduce of a real model's gradient is through the switch, next to Gloo's: each rank computes the
gradient of python/bench/models.py's model on its own batch (the harness's seeds), then sums it through the switchml
backend and through a Gloo group, in float32, and in float64 through Gloo as the reference. Rank 0 prints the largest
error of each against the float64 sum, how many elements differ between the two float32 sums, and the parameter
tensors with the largest error relative to their own largest sum.

Run: SWITCHML_AGENT_PER_HOST=0 switchml torchrun --workers 2 python/bench/sum_error.py --model resnet50
(an agent per rank: on one host, ranks that share an agent make a job of one worker, whose sum skips the switch)"""

import argparse

import torch
import torch.distributed as dist

import models
import switchml_torch  # noqa: F401 (registers the switchml backend)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="resnet50", choices=list(models.MODELS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--worst", type=int, default=5, help="parameter tensors to list (default 5)")
    args = ap.parse_args()
    args.resolution = args.sequence_length = 0
    torch.set_num_threads(1)
    dist.init_process_group("switchml")
    rank = dist.get_rank()
    gloo = dist.new_group(backend="gloo")
    workload = models.MODELS[args.model]
    torch.manual_seed(args.seed)
    module = workload.build(args)
    inputs, target = workload.batch(torch.Generator().manual_seed(args.seed * 1000 + rank), workload.batch_size, args)
    workload.loss(module(*inputs), target).backward()
    named = [(n, p.grad.reshape(-1)) for n, p in module.named_parameters() if p.grad is not None]
    gradient = torch.cat([g for _, g in named])
    switch, float32 = gradient.clone(), gradient.clone()
    reference = gradient.double()
    dist.all_reduce(switch)
    dist.all_reduce(float32, group=gloo)
    dist.all_reduce(reference, group=gloo)
    if rank == 0:
        largest = reference.abs().max().item()
        switch_error, gloo_error = (switch.double() - reference).abs(), (float32.double() - reference).abs()
        print("%s: %d gradient elements over %d ranks, largest sum %.4g" % (
            args.model, gradient.numel(), dist.get_world_size(), largest))
        print("largest error against the float64 sum: switch %.3g, Gloo %.3g (relative to the largest sum: %.3g, %.3g)"
              % (switch_error.max(), gloo_error.max(), switch_error.max() / largest, gloo_error.max() / largest))
        print("elements whose float32 sums differ between the two: %d (%.1f %%); non-zero sums the switch made zero: %d"
              % (int((switch != float32).sum()), 100.0 * float((switch != float32).float().mean()),
                 int(((switch == 0) & (reference != 0)).sum())))
        worst, offset = [], 0
        for name, g in named:
            part = slice(offset, offset + g.numel())
            scale = reference[part].abs().max().item() or 1.0
            worst.append((switch_error[part].max().item() / scale, gloo_error[part].max().item() / scale, name))
            offset += g.numel()
        for switch_relative, gloo_relative, name in sorted(worst, reverse=True)[:args.worst]:
            print("  %-40s switch %.3g, Gloo %.3g of the tensor's largest sum" % (name, switch_relative, gloo_relative))
    dist.barrier()
    dist.destroy_process_group(gloo)
    if dist.get_backend() == "switchml":
        dist.distributed_c10d._get_default_group().close()


if __name__ == "__main__":
    main()
