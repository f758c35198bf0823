"""``switchml`` as a torch.distributed backend: ``import switchml_torch`` registers it, and
``dist.init_process_group("switchml")`` makes a process group whose SUM and AVG reductions
(all_reduce, reduce_scatter) go through the host's agent, that is through the switch, and whose
other collectives go through a Gloo group over the same store (under the prefix ``switchml-gloo``):
broadcast, all_gather, gather, scatter, all_to_all, send/recv, barrier, reduce, and all_reduce with
MIN, MAX, PRODUCT and the bitwise ops (a switch only adds).

The process group is a Python subclass of ``torch.distributed.ProcessGroup`` (the extension point
of PyTorch 1.10+, PR 66338): C++ callers such as DDP's reducer reach its methods through
pybind11's trampoline. On PyTorch 2.x, ``register_backend`` takes the devices, and a creator that
returns a ``ProcessGroup`` subclass is used as the whole group; a Python class cannot be one of 2.x's
per-device ``Backend`` objects (they have no Python constructor). So the group answers under both
lines' names: 1.13's (``_allgather_base``, ``_reduce_scatter_base``, ``alltoall_base``) and 2.x's
(``all_gather_single``, ``reduce_scatter_single``, ``all_to_all_single`` and their ``*_coalesced``),
which ``torch.distributed``'s Python functions call on the group and the trampoline finds from C++.
What 2.x sends to a device's ``Backend`` instead (the C++ path of a method the trampoline does not
forward, and what asks the group for a device) finds the group's Gloo, registered as its CPU
backend (and CUDA's, where there is one). docs/pytorch.md says what was tested on which line.

The agent's settings come from the environment, so that plain ``torchrun`` starts it with no
wrapper: ``SWITCHML_ALGO`` (default switchml), ``SWITCHML_CONTROLLER`` (default
127.0.0.1:50099, a switch on this host), ``SWITCHML_JOB`` (default the torchelastic run id
``TORCHELASTIC_RUN_ID`` where it is not "none", else ``MASTER_ADDR:MASTER_PORT``, plus the restart count when
torchelastic restarted the workers, else srun's job and step, else a name rank 0 chose and put in the store); and the
job's secret: ``SWITCHML_JOB_SECRET`` where the launcher set one (``switchml torchrun`` does), else one
that rank 0 makes and hands out through the store, so that no stranger can take a seat of the job
(docs/security.md, "Job secrets").
"""

import collections
import datetime
import inspect
import os
import secrets
import uuid

import torch
import torch.distributed as dist

from .agent import AgentError, chain, start_agent

BACKEND = "switchml"
DEFAULT_CONTROLLER = "127.0.0.1:50099"

_c10d = torch._C._distributed_c10d
_Work = getattr(_c10d, "Work", None) or dist.ProcessGroup.Work  # 1.13 moved Work out of ProcessGroup
_R = dist.ReduceOp
_THROUGH_AGENT = {"SUM": "sum", "AVG": "mean"}
_THROUGH_GLOO = ("MIN", "MAX", "PRODUCT", "BAND", "BOR", "BXOR")


def _op_name(op):
    kind = getattr(op, "op", op)  # 1.13: a ReduceOp wraps a RedOpType, which has a name
    if isinstance(getattr(kind, "name", None), str):
        return kind.name
    for name in ("SUM", "AVG", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "PREMUL_SUM"):
        try:
            if hasattr(_R, name) and op == getattr(_R, name):
                return name
        except TypeError:
            pass
    return str(op)


def _variable(env, name):
    """The variable's value, stripped; None when unset or blank."""
    value = (env.get(name) or "").strip()
    return value or None


def launcher_job(env):
    """The job name the launcher's variables give, or None: ``torch-<TORCHELASTIC_RUN_ID>`` unless that is "none",
    else ``torch-<MASTER_ADDR>:<MASTER_PORT>``, either with ``-restart<N>`` after an elastic restart (the dead
    attempt's job may still be winding down at the switch); under a dynamic rendezvous
    (``TORCHELASTIC_USE_AGENT_STORE=False``: c10d, etcd) ``torch-<TORCHELASTIC_RUN_ID>-<MASTER_ADDR>:<MASTER_PORT>``,
    the round's rank 0's choice, the same on every node (a node that joined later counts its restarts from 0);
    else ``slurm-<SLURM_JOB_ID>[.<SLURM_STEP_ID>]``. The Java
    worker's rule is the same (``LauncherEnvironment``), so Java and Python ranks of one launch meet in one job; both
    pass the cases of client/src/test/resources/launcher-job-names.json."""
    run_id = _variable(env, "TORCHELASTIC_RUN_ID")
    address, port = _variable(env, "MASTER_ADDR"), _variable(env, "MASTER_PORT")
    # A dynamic rendezvous (c10d, etcd): a node that joins later counts its restarts from 0, but every node of a
    # round gets the address and port that round's rank 0 chose.
    named_by_round = bool(run_id and run_id != "none" and _variable(env, "TORCHELASTIC_USE_AGENT_STORE") == "False"
                          and address and port)
    name = None
    if named_by_round:
        name = "torch-%s-%s:%s" % (run_id, address, port)
    elif run_id and run_id != "none":
        name = "torch-" + run_id
    elif address and port:
        name = "torch-%s:%s" % (address, port)
    restart = _variable(env, "TORCHELASTIC_RESTART_COUNT")
    if name and not named_by_round and restart and restart != "0":
        name += "-restart" + restart
    if name is None and _variable(env, "SLURM_JOB_ID"):
        step = _variable(env, "SLURM_STEP_ID")
        name = "slurm-" + _variable(env, "SLURM_JOB_ID") + ("." + step if step else "")
    return name


def job_name(store=None, rank=0, env=None):
    """The job's name at the switch, the same on every rank (see the module's doc)."""
    env = os.environ if env is None else env
    name = _variable(env, "SWITCHML_JOB") or launcher_job(env)
    if name is None:
        if store is None:
            raise AgentError("no job name: set SWITCHML_JOB, or MASTER_ADDR and MASTER_PORT")
        if rank == 0:
            store.set("switchml/job", "torch-" + uuid.uuid4().hex)
        name = store.get("switchml/job").decode()
    return name


def job_secret(job, store=None, rank=0, env=None):
    """The job's secret, the same on every rank: the launcher's (SWITCHML_JOB_SECRET), else a fresh one
    from rank 0 through the store; None when the environment names a secret file (the agent reads it) or
    there is neither."""
    env = os.environ if env is None else env
    if env.get("SWITCHML_JOB_SECRET"):
        return env["SWITCHML_JOB_SECRET"].strip()
    if env.get("SWITCHML_JOB_SECRET_FILE") or store is None:
        return None
    key = "switchml/secret/" + job
    if rank == 0:
        store.set(key, secrets.token_urlsafe(32))
    return store.get(key).decode()


def attempt_store(store, env=None):
    """``store`` for this attempt of the workers: under torchrun's static rendezvous (its agent's store,
    ``TORCHELASTIC_USE_AGENT_STORE=True``) 2.x hands restarted workers the agent's store as it was, where the dead
    attempt's keys (its Gloo addresses among them) still are, so every attempt after the first gets a prefix of its
    own (1.13's torchrun added one itself). A dynamic rendezvous (c10d, etcd) on 1.13, or on 2.x with
    ``TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1``, makes a store for every round (``TORCHELASTIC_USE_AGENT_STORE=False``),
    which is used as it is. (2.x's c10d default, one store shared across rounds, also says True, while its nodes count
    restarts each their own: a host joining later does not work there yet, docs/pytorch.md "On PyTorch 2.x".)"""
    env = os.environ if env is None else env
    restart = _variable(env, "TORCHELASTIC_RESTART_COUNT")
    if _variable(env, "TORCHELASTIC_USE_AGENT_STORE") == "True" and restart and restart != "0":
        return dist.PrefixStore("switchml-attempt-%s" % restart, store)
    return store


# Works handed to C++ (DDP's reducer) are kept alive here a while: C++ holds only their C++ part, and a
# Python override (get_future) is found only while the Python object lives (PyTorch PR 79176).
_ALIVE = collections.deque()
_KEEP_RECENT = 64


def _work(future):
    """A Work done when ``future`` (of the list of output tensors, what DDP expects) is. A Python
    subclass, so that ``wait()`` raises the agent's error (the C++ wrapper of a future,
    _create_work_from_future, returns from wait() without raising it on 1.13)."""
    work = _FutureWork(future)
    _ALIVE.append(work)
    # Kept: every work not yet done, and the most recent ones (DDP asks for the future at once).
    while len(_ALIVE) > _KEEP_RECENT and _ALIVE[0]._future.done():
        _ALIVE.popleft()
    return work


class _FutureWork(_Work):
    """A Work done when its future is; wait() raises the future's error."""

    def __init__(self, future):
        super().__init__()
        self._future = future

    def wait(self, timeout=None):
        self._future.wait()  # raises the agent's error
        return True

    def get_future(self):
        return self._future

    def is_completed(self):
        return self._future.done()

    def is_success(self):
        if not self._future.done():
            return False
        try:
            self._future.value()
            return True
        except Exception:
            return False

    def exception(self):
        try:
            self._future.value()
            return None
        except Exception as e:
            return e

    def result(self):
        return self._future.wait()

    def synchronize(self):
        self._future.wait()


def _all(futures, outputs):
    """One future for several, of the outputs once all are done (the first error otherwise, as it was)."""
    if len(futures) == 1:
        return chain(futures[0], lambda value: outputs)

    def done(each):
        for f in each:
            f.value()  # raises the first failure
        return outputs
    return chain(torch.futures.collect_all(futures), done)


class SwitchMLProcessGroup(dist.ProcessGroup):
    """SUM/AVG reductions through the switch (the host's agent); everything else through Gloo."""

    def __init__(self, store, rank, size, timeout, job=None, **agent_options):
        super().__init__(rank, size)
        self._rank, self._size = rank, size
        store = attempt_store(store)
        self.gloo = dist.ProcessGroupGloo(dist.PrefixStore("switchml-gloo", store), rank, size, timeout)
        if hasattr(self, "_register_backend"):  # 2.x (see the module's doc)
            for device in ["cpu"] + (["cuda"] if torch.cuda.is_available() else []):
                self._register_backend(torch.device(device), dist.ProcessGroup.BackendType.GLOO, self.gloo)
        algo = agent_options.pop("algo", None) or os.environ.get("SWITCHML_ALGO", "switchml")
        controller = agent_options.pop("controller", None) or os.environ.get("SWITCHML_CONTROLLER", DEFAULT_CONTROLLER)
        job = job or job_name(store, rank)
        self.job = job  # its name at the switch
        timeout_s = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)
        agent_options.setdefault("join_timeout", max(120.0, min(timeout_s, 1800.0)))
        prefix = "switchml-agent/%s/" % job
        rounds = [0]

        def exchange(mine):  # the hosts, where their agents are, the TCP baselines' endpoints: through the store
            key = "%s%d/" % (prefix, rounds[0])
            rounds[0] += 1
            store.set(key + str(rank), mine)
            return [store.get(key + str(r)).decode() for r in range(size)]
        if algo == "switchml":
            agent_options.setdefault("job_secret", job_secret(job, store, rank))
        self.agent = start_agent(algo=algo, rank=rank, world_size=size, controller=controller, job=job,
                                 exchange=exchange, **agent_options)

    # ---- what C++ asks for by name (1.13: getBackendName; 2.x: _get_backend_name / name)

    def getBackendName(self):
        return BACKEND

    def _get_backend_name(self):
        return BACKEND

    def name(self):
        return BACKEND

    # ---- reductions through the agent

    def _agent_op(self, opts, what):
        op = getattr(opts, "reduceOp", opts)
        name = _op_name(op)
        if name in _THROUGH_AGENT:
            return _THROUGH_AGENT[name]
        if name in _THROUGH_GLOO:
            return None
        raise ValueError("the switchml backend's %s does not support ReduceOp.%s; it supports SUM and AVG through"
                         " the switch and MIN, MAX, PRODUCT, BAND, BOR, BXOR through Gloo" % (what, name))

    def allreduce(self, tensors, opts=None):
        tensors, opts = _listed(tensors), _options(opts, _c10d.AllreduceOptions)
        op = self._agent_op(opts, "all_reduce")
        if op is None:
            return self._gloo_allreduce(tensors, opts)
        return _work(_all([self._allreduce_one(t, op) for t in tensors], tensors))

    def _allreduce_one(self, tensor, op):
        """One tensor through the switch. A sparse one goes dense (every rank's rows may differ, and the switch
        adds whole blocks) and is written back sparse, as Gloo's sparse all-reduce leaves it."""
        if not tensor.is_sparse:
            return self.agent.allreduce_async(tensor, op)
        dense = tensor.to_dense()

        def back(value):
            tensor.copy_(dense.to_sparse(tensor.sparse_dim()))
            return tensor
        return chain(self.agent.allreduce_async(dense, op), back)

    def _gloo_allreduce(self, tensors, opts):
        """MIN, MAX...: Gloo's, with the dtypes it lacks (bfloat16, int16) converted on the way."""
        wider = {torch.bfloat16: torch.float32, torch.int16: torch.int32}
        if not any(t.dtype in wider for t in tensors):
            return self.gloo.allreduce(tensors, opts)
        staged = [t.to(wider.get(t.dtype, t.dtype)) for t in tensors]

        def back(value):
            for t, s in zip(tensors, staged):
                t.copy_(s)
            return tensors
        return _work(chain(self.gloo.allreduce(staged, opts).get_future(), back))

    def allreduce_coalesced(self, tensors, opts=None):
        opts = _options(opts, _c10d.AllreduceCoalescedOptions)
        op = self._agent_op(opts, "all_reduce_coalesced")
        if op is None:
            return self.gloo.allreduce_coalesced(tensors, opts)
        return _work(_all([self.agent.allreduce_async(t, op) for t in tensors], tensors))

    def reduce_scatter(self, output_tensors, input_tensors, opts=None):
        """Each output gets its rank's part of the sum of the inputs: the inputs are concatenated,
        all-reduced through the switch (which has to aggregate all of it anyway), and this rank's part
        copied out."""
        opts = _options(opts, _c10d.ReduceScatterOptions)
        op = self._agent_op(opts, "reduce_scatter")
        if op is None:
            return self.gloo.reduce_scatter(output_tensors, input_tensors, opts)
        futures = []
        for output, inputs in zip(output_tensors, input_tensors):
            if len(inputs) != self._size:
                raise ValueError("reduce_scatter needs %d input tensors, got %d" % (self._size, len(inputs)))
            futures.append(self._reduce_part(output, torch.cat([t.reshape(-1) for t in inputs]),
                                             sum(t.numel() for t in inputs[:self._rank]), op))
        return _work(_all(futures, output_tensors))

    def _reduce_scatter_base(self, output, input, opts=None):
        opts = _options(opts, _c10d.ReduceScatterOptions)
        op = self._agent_op(opts, "reduce_scatter_tensor")
        if op is None:
            return self.reduce_scatter([output], [list(input.reshape(-1).chunk(self._size))], opts)
        if input.numel() != output.numel() * self._size:
            raise ValueError("reduce_scatter_tensor: the input has %d elements, not %d x %d"
                             % (input.numel(), self._size, output.numel()))
        flat = input.reshape(-1).clone()
        return _work(_all([self._reduce_part(output, flat, self._rank * output.numel(), op)], [output]))

    def _reduce_scatter_coalesced(self, outputs, inputs, opts=None):
        """Several reduce_scatter_tensor at once (2.x's coalescing manager, functional collectives)."""
        opts = _options(opts, _c10d.ReduceScatterOptions)
        if len(outputs) != len(inputs):
            raise ValueError("reduce_scatter_tensor_coalesced: %d outputs for %d inputs" % (len(outputs), len(inputs)))
        works = [self._reduce_scatter_base(o, i, opts) for o, i in zip(outputs, inputs)]
        return _work(_all([w.get_future() for w in works], outputs))

    def _reduce_part(self, output, flat, start, op):
        def copy_out(value):
            output.copy_(value[start:start + output.numel()].view(output.shape))
            return output
        return chain(self.agent.allreduce_async(flat, op), copy_out)

    # ---- the rest through Gloo

    def broadcast(self, tensors, opts=None):
        # As bytes: Gloo (1.13) has no bfloat16 or int16, and DDP broadcasts the parameters at its start.
        tensors = _listed(tensors)
        staged = [_bytes(t) for t in tensors]
        work = self.gloo.broadcast([b for b, _ in staged], _options(opts, _c10d.BroadcastOptions))
        return _copied_back(work, tensors, staged)

    def allgather(self, output_tensors, input_tensors, opts=None):
        outputs = [[_bytes(t) for t in row] for row in output_tensors]
        inputs = [_bytes(t)[0] for t in _listed(input_tensors)]
        work = self.gloo.allgather([[b for b, _ in row] for row in outputs], inputs, _options(opts, _c10d.AllgatherOptions))
        return _copied_back(work, [t for row in output_tensors for t in row], [p for row in outputs for p in row])

    def _allgather_base(self, output, input, opts=None):
        # Gloo (1.13) has no _allgather_base: gather into the output's chunks, views of it.
        return self.gloo.allgather([list(output.reshape(-1).chunk(self._size))], [input.reshape(-1)],
                                   _options(opts, _c10d.AllgatherOptions))

    def _allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
        """Several all_gather_into_tensor at once (2.x's coalescing manager)."""
        if len(outputs) != len(inputs):
            raise ValueError("all_gather_into_tensor_coalesced: %d outputs for %d inputs" % (len(outputs), len(inputs)))
        works = [self._allgather_base(o, i, opts) for o, i in zip(outputs, inputs)]
        return _work(_all([w.get_future() for w in works], outputs))

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        return self.gloo.allgather_coalesced(output_lists, input_list, _options(opts, _c10d.AllgatherOptions))

    def barrier(self, opts=None):
        return self.gloo.barrier(_options(opts, _c10d.BarrierOptions))

    def monitored_barrier(self, *args, **kwargs):
        return self.gloo.monitored_barrier(*args, **kwargs)

    def gather(self, *args, **kwargs):
        return self.gloo.gather(*args, **kwargs)

    def scatter(self, *args, **kwargs):
        return self.gloo.scatter(*args, **kwargs)

    def reduce(self, *args, **kwargs):
        return self.gloo.reduce(*args, **kwargs)

    def alltoall(self, *args, **kwargs):
        return self.gloo.alltoall(*args, **kwargs)

    def alltoall_base(self, *args, **kwargs):
        return self.gloo.alltoall_base(*args, **kwargs)

    def send(self, *args, **kwargs):
        return self.gloo.send(*args, **kwargs)

    def recv(self, *args, **kwargs):
        return self.gloo.recv(*args, **kwargs)

    def recv_anysource(self, *args, **kwargs):
        return self.gloo.recv_anysource(*args, **kwargs)

    # ---- 2.x's names for the same collectives (1.13 calls the ones above; 2.x's Python functions these)

    all_gather_single = _allgather_base
    reduce_scatter_single = _reduce_scatter_base
    all_to_all_single = alltoall_base
    all_gather_single_coalesced = allgather_into_tensor_coalesced = _allgather_into_tensor_coalesced
    reduce_scatter_single_coalesced = reduce_scatter_tensor_coalesced = _reduce_scatter_coalesced

    def close(self):
        """Leaves the job (waits for the all-reduces in flight); destroy_process_group() does not call it,
        atexit does."""
        self.agent.close()


def _bytes(t):
    """``t`` as bytes for Gloo, and whether they are a copy (to be written back); dtypes Gloo has go as they are."""
    if t.dtype not in (torch.bfloat16, torch.int16, torch.bool):
        return t, False
    if t.is_contiguous():
        return t.reshape(-1).view(torch.uint8), False
    return t.contiguous().reshape(-1).view(torch.uint8), True


def _copied_back(work, tensors, staged):
    if not any(copied for _, copied in staged):
        return work

    def back(value):
        for t, (b, copied) in zip(tensors, staged):
            if copied:
                t.copy_(b.view(t.dtype).view(t.shape))
        return tensors
    return _work(chain(work.get_future(), back))


def _listed(tensors):
    return [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)


def _options(opts, kind):
    """The options object Gloo takes; from Python, a ReduceOp may come where C++ passes options."""
    if opts is None:
        return kind()
    if isinstance(opts, kind):
        return opts
    made = kind()
    if hasattr(made, "reduceOp"):
        made.reduceOp = opts
    return made


def _create(options, pg_options=None):
    """The creator torch.distributed calls (extended API: it tells the group's name and ranks)."""
    job = None
    if options.global_ranks_in_group:  # a subgroup (new_group): its own job at the switch
        job = "%s/group-%s" % (job_name(options.store, options.group_rank), options.group_id)
    return SwitchMLProcessGroup(options.store, options.group_rank, options.group_size, options.timeout, job=job)


def register():
    """Registers ``switchml`` with torch.distributed (once; ``import switchml_torch`` does it)."""
    if BACKEND.upper() in getattr(dist.Backend, "_plugins", {}):
        return
    kwargs = {"extended_api": True}
    if "devices" in inspect.signature(dist.Backend.register_backend).parameters:  # 2.x
        kwargs["devices"] = ["cpu", "cuda"]
    dist.Backend.register_backend(BACKEND, _create, **kwargs)
