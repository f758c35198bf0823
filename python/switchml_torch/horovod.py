"""Horovod's PyTorch API on the switchml backend: a Horovod script moves by changing its import,
``import horovod.torch as hvd`` to ``import switchml_torch.horovod as hvd``, and starts under
``torchrun`` (or ``switchml torchrun``) instead of ``horovodrun``.

``hvd.init()`` makes the default process group with the ``switchml`` backend (env:// rendezvous:
RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT) unless one exists. Sums and averages go through the
switch; broadcasts and gathers through the backend's Gloo group. What differs from Horovod:

- tensors are matched by the order in which every rank submits them, not by ``name`` (accepted
  and ignored): every rank must submit the same all-reduces in the same order, as with DDP;
- ``DistributedOptimizer`` all-reduces the gradients when ``step()`` (or ``synchronize()``) is
  called, in parameter order, all in flight at once; Horovod starts each during the backward pass.
  With ``backward_passes_per_step`` > 1 the gradients accumulate locally (summed) in between;
- Adasum, process sets and ``join`` are not there; ``Compression.fp16`` casts the gradients to
  float16 and back (the switch adds them as float32 either way);
- the elastic API (``hvd.elastic``: ``run``, ``State``, ``ObjectState``, ``TorchState``) follows
  torchrun's elastic model, where a failure or a membership change restarts every worker: a commit
  also goes to the host's disk and a restarted worker goes on from the newest one (see
  ``switchml_torch.horovod_elastic``).
"""

import contextlib
import os

import torch
import torch.distributed as dist

from . import backend  # registers "switchml"
from . import horovod_elastic as elastic


class _Op:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "hvd." + self.name


Average, Sum, Min, Max, Product = _Op("Average"), _Op("Sum"), _Op("Min"), _Op("Max"), _Op("Product")
Adasum = _Op("Adasum")
_REDUCE_OPS = {"Sum": dist.ReduceOp.SUM, "Min": dist.ReduceOp.MIN, "Max": dist.ReduceOp.MAX,
               "Product": dist.ReduceOp.PRODUCT}


class Compression:
    """Horovod's gradient compression: ``none``, or ``fp16`` (cast to float16 for the all-reduce)."""

    class none:
        @staticmethod
        def compress(tensor):
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor

    class fp16:
        @staticmethod
        def compress(tensor):
            if tensor.dtype.is_floating_point:
                return tensor.to(torch.float16), tensor.dtype
            return tensor, None

        @staticmethod
        def decompress(tensor, ctx):
            return tensor if ctx is None else tensor.to(ctx)


# ---- setup


def init(comm=None, process_sets=None):
    """Joins the job: the default process group with the switchml backend, unless one exists."""
    if comm is not None or process_sets is not None:
        raise ValueError("switchml_torch.horovod.init takes no MPI communicator or process sets")
    if not dist.is_initialized():
        dist.init_process_group(backend.BACKEND)


def shutdown():
    """Leaves the job (the agent's all-reduces in flight finish first)."""
    if dist.is_initialized():
        group = dist.distributed_c10d._get_default_group()
        if hasattr(group, "close"):
            group.close()
        dist.destroy_process_group()


def is_initialized():
    return dist.is_initialized()


def _check():
    if not dist.is_initialized():
        raise ValueError("Horovod has not been initialized; use hvd.init().")


def rank():
    _check()
    return dist.get_rank()


def size():
    _check()
    return dist.get_world_size()


def local_rank():
    _check()
    return int(os.environ.get("LOCAL_RANK", dist.get_rank()))


def local_size():
    _check()
    return int(os.environ.get("LOCAL_WORLD_SIZE", dist.get_world_size()))


def cross_rank():
    return rank() // local_size()


def cross_size():
    return size() // local_size()


def is_homogeneous():
    return True


def mpi_built():
    return False


def mpi_enabled():
    return False


def mpi_threads_supported():
    return False


def gloo_built():
    return True


def gloo_enabled():
    return True


def nccl_built():
    return False


def ddl_built():
    return False


def ccl_built():
    return False


def cuda_built():
    return torch.cuda.is_available()


def rocm_built():
    return False


# ---- collectives


class _Handle:
    def __init__(self, work, output, finish=None):
        self.work, self.output, self.finish = work, output, finish


def _op(average, op):
    if op is None:
        op = Average if average is None or average else Sum
    elif average is not None:
        raise ValueError("give op or average, not both")
    if op is Adasum:
        raise NotImplementedError("Adasum is not supported by switchml_torch.horovod (a switch adds)")
    return op


def _allreduce_async_(tensor, op, prescale_factor=1.0, postscale_factor=1.0):
    if prescale_factor != 1.0:
        tensor.mul_(prescale_factor)
    if op is Average:
        # AVG through the switch; for integers it truncates, as Horovod's does.
        work = dist.all_reduce(tensor, op=dist.ReduceOp.AVG, async_op=True)
    else:
        work = dist.all_reduce(tensor, op=_REDUCE_OPS[op.name], async_op=True)
    finish = (lambda t: t.mul_(postscale_factor)) if postscale_factor != 1.0 else None
    return _Handle(work, tensor, finish)


def allreduce_async_(tensor, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
                     process_set=None):
    """Starts averaging (or summing) ``tensor`` in place over all ranks; returns a handle for synchronize()."""
    return _allreduce_async_(tensor, _op(average, op), prescale_factor, postscale_factor)


def allreduce_async(tensor, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
                    process_set=None):
    """Like allreduce_async_, into a new tensor (``tensor`` is left as it is)."""
    return _allreduce_async_(tensor.detach().clone(), _op(average, op), prescale_factor, postscale_factor)


def allreduce_(tensor, average=None, name=None, op=None, prescale_factor=1.0, postscale_factor=1.0,
               process_set=None):
    return synchronize(allreduce_async_(tensor, average, name, op, prescale_factor, postscale_factor))


def allreduce(tensor, average=None, name=None, compression=Compression.none, op=None, prescale_factor=1.0,
              postscale_factor=1.0, process_set=None):
    """The average (default) or sum of ``tensor`` over all ranks, as a new tensor."""
    compressed, ctx = compression.compress(tensor.detach())
    result = synchronize(allreduce_async(compressed, average, name, op, prescale_factor, postscale_factor))
    return compression.decompress(result, ctx)


def grouped_allreduce(tensors, average=None, name=None, compression=Compression.none, op=None, **kwargs):
    handles = [allreduce_async(t, average, name, op) for t in tensors]
    return [synchronize(h) for h in handles]


def broadcast_async_(tensor, root_rank, name=None, process_set=None):
    return _Handle(dist.broadcast(tensor, src=root_rank, async_op=True), tensor)


def broadcast_async(tensor, root_rank, name=None, process_set=None):
    return broadcast_async_(tensor.detach().clone(), root_rank)


def broadcast_(tensor, root_rank, name=None, process_set=None):
    return synchronize(broadcast_async_(tensor, root_rank))


def broadcast(tensor, root_rank, name=None, process_set=None):
    """Rank ``root_rank``'s ``tensor``, as a new tensor on every rank."""
    return synchronize(broadcast_async(tensor, root_rank))


def allgather(tensor, name=None, process_set=None):
    """Every rank's ``tensor`` concatenated along the first dimension (which may differ between ranks)."""
    tensor = tensor.detach()
    if tensor.dim() == 0:
        tensor = tensor.reshape(1)
    lengths = [None] * size()
    dist.all_gather_object(lengths, tensor.shape[0])
    longest = max(lengths)
    padded = torch.zeros((longest,) + tuple(tensor.shape[1:]), dtype=tensor.dtype)
    padded[:tensor.shape[0]] = tensor
    parts = [torch.empty_like(padded) for _ in lengths]
    dist.all_gather(parts, padded)
    return torch.cat([p[:n] for p, n in zip(parts, lengths)])


def allgather_async(tensor, name=None, process_set=None):
    result = allgather(tensor)
    return _Handle(None, result)


def broadcast_object(obj, root_rank=0, name=None, process_set=None):
    objects = [obj if rank() == root_rank else None]
    dist.broadcast_object_list(objects, src=root_rank)
    return objects[0]


def allgather_object(obj, name=None, process_set=None):
    objects = [None] * size()
    dist.all_gather_object(objects, obj)
    return objects


def poll(handle):
    """Whether the operation is done (synchronize() will not wait)."""
    return handle.work is None or handle.work.is_completed()


def synchronize(handle):
    """Waits for the operation; returns its output tensor (the agent's error is raised here)."""
    if handle.work is not None:
        handle.work.wait()
    if handle.finish is not None:
        handle.finish(handle.output)
    return handle.output


def barrier(process_set=None):
    dist.barrier()


# ---- parameters and optimizers


def broadcast_parameters(params, root_rank):
    """Sets every rank's parameters to rank ``root_rank``'s, in place: ``model.state_dict()``,
    ``model.named_parameters()``, or a list of (name, tensor) pairs."""
    if isinstance(params, dict):
        items = sorted(params.items())
    else:
        items = list(params)
        if items and not isinstance(items[0], tuple):
            raise ValueError("broadcast_parameters takes a state_dict or (name, tensor) pairs")
    handles = [broadcast_async_(p.data if isinstance(p, torch.nn.Parameter) else p, root_rank)
               for _, p in items if p is not None]
    for h in handles:
        synchronize(h)


def broadcast_optimizer_state(optimizer, root_rank):
    """Sets every rank's optimizer state (and hyper-parameters) to rank ``root_rank``'s."""
    if isinstance(optimizer, torch.optim.LBFGS):
        raise ValueError("cannot broadcast the state of torch.optim.LBFGS")
    state = broadcast_object(optimizer.state_dict(), root_rank)
    if rank() != root_rank:
        optimizer.load_state_dict(state)


class _DistributedOptimizer(torch.optim.Optimizer):
    def __init__(self, params, named_parameters, compression, backward_passes_per_step, op,
                 gradient_predivide_factor):
        super(self.__class__, self).__init__(params)
        self._compression = compression
        self._op = _op(None, op)
        self._predivide = gradient_predivide_factor
        self.backward_passes_per_step = backward_passes_per_step
        if named_parameters is not None:
            named = list(named_parameters)
            names = {id(p): n for n, p in named}
            unnamed = [p for group in self.param_groups for p in group["params"] if id(p) not in names]
            if unnamed:
                raise ValueError("named_parameters does not name %d of the optimizer's parameters" % len(unnamed))
        self._synchronized = False
        self._should_synchronize = True

    def _params(self):
        return [p for group in self.param_groups for p in group["params"] if p.requires_grad]

    def synchronize(self):
        """All-reduces every gradient (all in flight at once, in parameter order), then waits."""
        pending = []
        for p in self._params():
            if p.grad is None:
                p.grad = torch.zeros_like(p)  # every rank submits the same sequence
            compressed, ctx = self._compression.compress(p.grad)
            pre = 1.0 / self._predivide if self._op is Average else 1.0
            post = self._predivide if self._op is Average else 1.0
            pending.append((p, compressed, ctx, _allreduce_async_(compressed, self._op, pre, post)))
        for p, compressed, ctx, handle in pending:
            synchronize(handle)
            if compressed is not p.grad:
                p.grad.copy_(self._compression.decompress(compressed, ctx))
        self._synchronized = True

    @contextlib.contextmanager
    def skip_synchronize(self):
        """For step() after an explicit synchronize() (gradient clipping in between)."""
        self._should_synchronize = False
        try:
            yield
        finally:
            self._should_synchronize = True

    def step(self, closure=None):
        if self._should_synchronize and not self._synchronized:
            self.synchronize()
        self._synchronized = False
        return super(self.__class__, self).step(closure)

    def zero_grad(self, *args, **kwargs):
        self._synchronized = False
        return super(self.__class__, self).zero_grad(*args, **kwargs)


def DistributedOptimizer(optimizer, named_parameters=None, compression=Compression.none, backward_passes_per_step=1,
                         op=Average, gradient_predivide_factor=1.0, num_groups=0, groups=None,
                         sparse_as_dense=False, process_set=None):
    """``optimizer`` with its gradients averaged over all ranks before each step (Horovod's)."""
    cls = type(optimizer.__class__.__name__, (optimizer.__class__,), dict(_DistributedOptimizer.__dict__))
    distributed = cls(optimizer.param_groups, named_parameters, compression, backward_passes_per_step, op,
                      gradient_predivide_factor)
    distributed.load_state_dict(optimizer.state_dict())
    return distributed
