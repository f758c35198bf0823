"""Horovod's elastic API (``hvd.elastic``) for scripts under torchrun's elastic restarts.

Horovod's elastic driver keeps the worker processes alive when hosts come and go and re-forms the job
inside them; torchrun does it the other way: when a rank fails or the membership changes
(``--nnodes MIN:MAX``), its agents stop every worker and start them again, a new rendezvous with the
new world (and, here, a new job at the switch, ``-restart<N>``). So the same script API works on
torchrun's model:

- ``state.commit()`` keeps the state in memory, as Horovod's does, and also writes it to this host's
  disk (``SWITCHML_ELASTIC_DIR``, default a private directory under the temporary directory named
  after the launch, files 0600), where a restarted worker finds it;
- ``hvd.elastic.run(func)(state)`` first loads the newest commit this host holds when torchrun has
  restarted the workers (``TORCHELASTIC_RESTART_COUNT`` > 0) and calls the reset callbacks (the world
  may have changed size), then ``state.sync()`` gives every rank the newest commit any rank holds (a
  new host has none), then runs ``func``; an error in it ends the process, and torchrun restarts the
  group (``--max_restarts``) from the last commit;
- ``check_host_updates()`` never raises ``HostsUpdatedInterrupt``: torchrun does not tell running
  workers of new hosts, it restarts them.

What is lost on a failure is what was not committed, as with Horovod; unlike Horovod, every worker
restarts (its Python process and its agent), so a commit is a disk write: commit every few batches.
"""

import copy
import glob
import os
import socket
import tempfile

import torch


__all__ = ["State", "ObjectState", "TorchState", "run", "HorovodInternalError", "HostsUpdatedInterrupt"]


class HorovodInternalError(RuntimeError):
    """Horovod's name for a failed collective; the backend raises its own errors, which end the worker."""


class HostsUpdatedInterrupt(RuntimeError):
    """Horovod's interrupt for a membership change; torchrun restarts the workers instead, so it is never raised."""


def _hvd():
    from . import horovod
    return horovod


def _directory():
    path = os.environ.get("SWITCHML_ELASTIC_DIR")
    if not path:
        # The launch, not the attempt: torchrun's run id, else the static rendezvous's address (a dynamic
        # rendezvous's changes every round).
        run_id = os.environ.get("TORCHELASTIC_RUN_ID", "").strip()
        launch = run_id if run_id and run_id != "none" else "%s:%s" % (os.environ.get("MASTER_ADDR", "local"),
                                                                       os.environ.get("MASTER_PORT", "0"))
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in launch)
        path = os.path.join(tempfile.gettempdir(), "switchml-elastic-%d" % os.getuid(), safe)
    os.makedirs(path, mode=0o700, exist_ok=True)
    return path


def _restarted():
    return int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0") or 0) > 0


class State:
    """What a worker keeps across failures: commits, restores and syncs it (Horovod's ``State``)."""

    def __init__(self):
        self._reset_callbacks = []
        self._commits = 0

    def register_reset_callbacks(self, callbacks):
        """Functions called after a restart, before training goes on (e.g. to scale the rate to the new size)."""
        self._reset_callbacks.extend(callbacks)

    def on_reset(self):
        for callback in self._reset_callbacks:
            callback()

    def commit(self):
        """Saves the state in memory and on this host's disk, for a restarted worker to go on from."""
        self.save()
        self._commits += 1
        self._write()
        self.check_host_updates()

    def check_host_updates(self):
        """Horovod raises HostsUpdatedInterrupt here when hosts changed; under torchrun they cause a restart."""

    # ---- what a kind of state defines

    def save(self):
        raise NotImplementedError

    def restore(self):
        raise NotImplementedError

    def _snapshot(self):
        """The saved state as one picklable object."""
        raise NotImplementedError

    def _load_snapshot(self, snapshot):
        raise NotImplementedError

    # ---- across ranks and restarts

    def sync(self):
        """Every rank takes the newest commit any rank holds (rank 0's when none committed yet)."""
        hvd = _hvd()
        held = hvd.allgather_object((self._commits, -hvd.rank()))
        commits, negative_rank = max(held)
        snapshot = hvd.broadcast_object((commits, self._snapshot()), root_rank=-negative_rank)
        self._commits = snapshot[0]
        self._load_snapshot(snapshot[1])
        self.restore()

    def _file(self):
        return os.path.join(_directory(), "%s-%d.pt" % (socket.gethostname(), _hvd().local_rank()))

    def _write(self):
        path = self._file()
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".commit-")
        try:
            with os.fdopen(fd, "wb") as out:
                torch.save({"commits": self._commits, "state": self._snapshot()}, out)
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise

    def _read_newest(self):
        """Loads the newest commit this host holds (any local rank's file); returns whether there was one."""
        newest = None
        for path in glob.glob(os.path.join(_directory(), "*.pt")):
            try:
                saved = torch.load(path)
            except (OSError, EOFError, RuntimeError):
                continue  # a file a dying worker left half-written is never renamed into place; skip anything else
            if newest is None or saved["commits"] > newest["commits"]:
                newest = saved
        if newest is None:
            return False
        self._commits = newest["commits"]
        self._load_snapshot(newest["state"])
        self.restore()
        return True


class ObjectState(State):
    """Plain Python values, given as keyword arguments and kept as attributes (Horovod's ``ObjectState``)."""

    def __init__(self, **kwargs):
        super().__init__()
        self._saved = copy.deepcopy(kwargs)
        self.restore()

    def save(self):
        self._saved = {name: copy.deepcopy(getattr(self, name)) for name in self._saved}

    def restore(self):
        for name, value in self._saved.items():
            setattr(self, name, copy.deepcopy(value))

    def _snapshot(self):
        return self._saved

    def _load_snapshot(self, snapshot):
        self._saved = snapshot


class TorchState(ObjectState):
    """A model's and an optimizer's state dicts, and plain values (Horovod's ``TorchState``)."""

    def __init__(self, model=None, optimizer=None, **kwargs):
        self.model = model
        self.optimizer = optimizer
        self._saved_model = None
        self._saved_optimizer = None
        super().__init__(**kwargs)
        self._save_torch()

    def _save_torch(self):
        if self.model is not None:
            self._saved_model = copy.deepcopy(self.model.state_dict())
        if self.optimizer is not None:
            self._saved_optimizer = copy.deepcopy(self.optimizer.state_dict())

    def save(self):
        super().save()
        self._save_torch()

    def restore(self):
        super().restore()
        if self.model is not None and self._saved_model is not None:
            self.model.load_state_dict(self._saved_model)
        if self.optimizer is not None and self._saved_optimizer is not None:
            self.optimizer.load_state_dict(self._saved_optimizer)

    def _snapshot(self):
        return {"values": self._saved, "model": self._saved_model, "optimizer": self._saved_optimizer}

    def _load_snapshot(self, snapshot):
        self._saved = snapshot["values"]
        self._saved_model = snapshot["model"]
        self._saved_optimizer = snapshot["optimizer"]


def run(func):
    """Runs ``func(state, ...)`` from the newest commit: after a torchrun restart, the one this host kept."""
    def wrapper(state, *args, **kwargs):
        if _restarted() and state._read_newest():
            state.on_reset()
        state.sync()
        return func(state, *args, **kwargs)
    wrapper.__name__ = getattr(func, "__name__", "run")
    wrapper.__doc__ = getattr(func, "__doc__", None)
    return wrapper
