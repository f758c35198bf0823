"""This host's switchml agent: start-up, and all-reduces through its shared memory and socket.

The ranks of one launch on one host share one agent (``switchml agent``, Java): the host's lowest rank starts it,
the others find it through the process group (hosts are told apart by hostname, boot, user, network namespace
and the file systems of /dev/shm and the temporary directory), and it joins the job once for all of them, as the
host's one worker. It creates a file under /dev/shm (mode 0600 from its creation: the tensors are this user's alone;
the socket's directory is mkdtemp's, 0700) with a region for each local rank, which maps its own. For each all-reduce a rank copies the tensor into a free part of its
region, sends ``R ID OFFSET COUNT OP TYPE`` over the Unix-domain socket, and the agent, once every local rank has
asked for that all-reduce, sums them, all-reduces the sum through the job and writes the result into each rank's
bytes; on ``D ID`` (completions come in request order) the result is copied back. Parts are handed out as a ring,
since they are freed in the order they were taken. ``SWITCHML_AGENT_PER_HOST=0`` gives every rank an agent of its
own instead (the job then has a worker per rank).
"""

import atexit
import collections
import ctypes
import hashlib
import mmap
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import torch

_TYPES = {torch.float32: "f32", torch.int32: "i32"}
# What the agent reduces each dtype as: the tensor is converted while it is copied into the shared
# memory and back (copy_ converts), so a conversion costs no extra pass. float64 loses precision
# (reduced as float32); int64 goes as three 21-bit limbs of int32 (exact, see _allreduce_int64).
_WIRE = {torch.float32: torch.float32, torch.float16: torch.float32, torch.bfloat16: torch.float32,
         torch.float64: torch.float32, torch.int32: torch.int32, torch.int16: torch.int32,
         torch.int8: torch.int32, torch.uint8: torch.int32}
SUPPORTED_DTYPES = tuple(_WIRE) + (torch.int64,)
_ALIGN = 64
_LIMB_BITS = 21
_MAX_LIMB_WORKERS = (2 ** 31 - 1) // (2 ** _LIMB_BITS)  # limb sums stay within int32


class AgentError(RuntimeError):
    """The agent failed or went away; the message says why."""


def chain(future, fn, devices=None):
    """A future of ``fn(future's value)``, like ``future.then(fn)`` but failing with the original error
    (``then`` wraps it in "Got the following error when running the callback: ..." and a traceback)."""
    done = torch.futures.Future(devices=devices) if devices else torch.futures.Future()

    def complete(f):
        try:
            result = fn(f.value())
        except Exception as e:
            done.set_exception(e)
        else:
            done.set_result(result)
    future.then(complete)
    return done


def stage_to_host(tensor, pin=None):
    """A host copy of a device tensor for the agent, in pinned memory when CUDA is available (``pin``
    None), so the device-to-host copy is a DMA; the caller's stream is synchronized before returning."""
    if pin is None:
        pin = torch.cuda.is_available()
    host = torch.empty(tensor.shape, dtype=tensor.dtype, device="cpu", pin_memory=pin)
    host.copy_(tensor, non_blocking=pin)
    if pin and tensor.device.type == "cuda":
        torch.cuda.current_stream(tensor.device).synchronize()
    return host


def unstage_from_host(tensor, host):
    """Writes the reduced host copy back into the device tensor (synchronously: the future that
    completes with ``tensor`` must not complete before its data is there)."""
    tensor.copy_(host)
    return tensor


_MAIN = "io.switchml.agent.AgentCommand"  # the agent's own main (its module's jar), not the whole command line's
_KERNEL_MODULES = "--add-modules=jdk.incubator.vector"  # for SWITCHML_KERNELS=vector, as ./switchml adds it


def _agent_launch():
    """How to start the agent: (the command before its options, the environment, the class-data archive)."""
    java = os.environ.get("SWITCHML_JAVA")
    classpath = os.environ.get("SWITCHML_CLASSPATH")
    if java and classpath:
        archive = ClassDataArchive.beside(Path(classpath.split(os.pathsep)[0]).parent, java, classpath)
        modules = [_KERNEL_MODULES] if os.environ.get("SWITCHML_KERNELS") == "vector" else []
        return [java, *modules, *jdk_options(java_feature(java)), *archive.options(), "-cp", classpath, _MAIN], None, \
            archive
    root = Path(__file__).resolve().parents[2]
    script = root / "switchml"
    if script.is_file():
        # ./switchml agent (it builds first where sources changed) runs the agent module's class path.
        listed = root / "agent" / "target" / "agent-classpath.txt"
        # The script picks its java itself and keeps its own ahead-of-time cache on JDK 25+, unless given this archive.
        archive = ClassDataArchive.beside(listed.parent, "java", listed.read_text().strip() if listed.is_file() else "")
        env = dict(os.environ)
        env["SWITCHML_JAVA_OPTS"] = " ".join([env.get("SWITCHML_JAVA_OPTS", ""), *archive.options()]).strip()
        return [str(script), "agent"], env, archive
    found = shutil.which("switchml")
    if found:
        return [found, "agent"], None, ClassDataArchive(None)
    raise AgentError("cannot find the switchml command: run under `switchml torchrun`, set SWITCHML_JAVA and "
                     "SWITCHML_CLASSPATH, or put switchml on the PATH")


def _shared_secret():
    """The launcher's job secret, else one from rank 0 over the default process group; None without either
    (or where the environment names a secret file, which the agent reads)."""
    if os.environ.get("SWITCHML_JOB_SECRET") or os.environ.get("SWITCHML_JOB_SECRET_FILE"):
        return None  # the agent takes it from the environment it inherits
    if not torch.distributed.is_initialized():
        return None
    mine = [secrets.token_urlsafe(32) if torch.distributed.get_rank() == 0 else None]
    torch.distributed.broadcast_object_list(mine, src=0)
    return mine[0]


def java_feature(java):
    """The feature version (17, 21, 25) of a java command, from its JDK's release file; 0 where unknown."""
    found = shutil.which(java) or java
    release = Path(os.path.realpath(found)).parent.parent / "release"
    try:
        version = re.search(r'^JAVA_VERSION="(\d+)', release.read_text(), re.M)
    except OSError:
        return 0
    return int(version.group(1)) if version else 0


def jdk_options(feature):
    """On JDK 24+, what keeps the agent's libraries' native-access and sun.misc.Unsafe warnings out of its log, as
    the project's other JVMs have it (docs/ARCHITECTURE.md section 18)."""
    return ["--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow"] if feature >= 24 else []


class ClassDataArchive:
    """The agent's classes as the JVM left them after loading them: made by the first agent that exits normally
    (into a name of its own, renamed into place after), mapped by every later one, which then neither reads nor
    verifies those classes again. On JDK 25+ the JDK's ahead-of-time cache (-XX:AOTCacheOutput, -XX:AOTCache), which
    keeps the run's method profiles too, so a later agent compiles its hot loops sooner (docs/ARCHITECTURE.md
    section 18); before it a dynamic AppCDS archive (-XX:ArchiveClassesAtExit, -XX:SharedArchiveFile, JDK 13+). Its
    name hashes the java command, the class path and every entry's size and time, so a rebuild makes a new one (and
    the new one replaces the old); an archive the JVM still refuses is ignored by it, as -Xshare:auto does. Kept
    beside the agent's jar (target/); none where that is not writable."""

    def __init__(self, directory, key=None, feature=0):
        self.suffix = "aot" if feature >= 25 else "jsa"
        self.path = directory / ("agent-%s.%s" % (key, self.suffix)) if directory is not None and key else None
        self.dumping = None

    @classmethod
    def beside(cls, directory, java, classpath):
        if not classpath or os.environ.get("SWITCHML_CDS", "1") == "0" or not os.access(directory, os.W_OK):
            return cls(None)
        java = os.path.realpath(shutil.which(java) or java)  # one name for the one JVM, however it was named
        digest = hashlib.sha256(("%s\0%s" % (java, classpath)).encode())
        for entry in classpath.split(os.pathsep):
            try:
                st = os.stat(entry)
                digest.update(b"%d:%d;" % (st.st_size, st.st_mtime_ns))
            except OSError:
                digest.update(b"-;")
        return cls(directory, digest.hexdigest()[:16], java_feature(java))

    def options(self):
        if self.path is None:
            return []
        # Without the JVM's notes on classes it leaves out (or on an archive it refuses): they would bury the
        # reason an agent failed at the end of its log, which is what an AgentError shows.
        quiet = ["-Xlog:cds=off"] if self.suffix == "jsa" else ["-Xlog:aot*=off", "-Xlog:cds*=off"]
        if self.path.is_file():
            return quiet + ["-XX:%s=%s" % ("SharedArchiveFile" if self.suffix == "jsa" else "AOTCache", self.path)]
        self.dumping = self.path.with_name("%s.%d-%d.tmp" % (self.path.name, os.getpid(), time.monotonic_ns()))
        if self.suffix == "jsa":
            return quiet + ["-XX:ArchiveClassesAtExit=" + str(self.dumping)]
        # The JDK says what it writes at exit; on standard error, which the agent's log holds with its output.
        return quiet + ["-XX:+DisplayVMOutputToStderr", "-XX:AOTCacheOutput=" + str(self.dumping)]

    def settle(self, exit_code):
        """After the agent ended: the archive it wrote becomes the one (when it exited normally), older ones go."""
        if self.dumping is None:
            return
        try:
            if exit_code == 0 and self.dumping.is_file():
                os.replace(self.dumping, self.path)
                for old in self.path.parent.glob("agent-*." + self.suffix):
                    if old != self.path:
                        old.unlink()
                for left in self.path.parent.glob("agent-*.%s.*.tmp" % self.suffix):  # of Python processes that died first
                    if not _alive(int(left.name.rsplit(".", 2)[1].split("-")[0])):
                        left.unlink()
            else:
                self.dumping.with_name(self.dumping.name + ".config").unlink(missing_ok=True)  # the JDK's, left by a kill
                self.dumping.unlink()
        except (OSError, ValueError):
            pass  # another rank's agent settled it first, it was never written, or a name is not ours
        self.dumping = None


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's
    return True


def local_address_toward(host):
    """This host's IPv4 address on the route to ``host`` (connecting a UDP socket sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect((host, 9))
        except OSError as e:
            raise AgentError("no route to %s (MASTER_ADDR) to choose the address this rank listens on: %s" % (host, e)) from None
        return probe.getsockname()[0]


def _die_with_parent():
    # Linux: the agent gets SIGTERM when this process dies before it has connected to the socket.
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def host_key():
    """What tells this host apart from the others of a launch: ranks with the same key may share an agent (the same
    machine and boot, user and network namespace, and the same /dev/shm and temporary directory, where the agent's
    files are: not the mount namespace itself, which ``ip netns exec`` makes anew for every process)."""
    parts = [socket.gethostname(), str(os.getuid())]
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            parts.append(f.read().strip())
    except OSError:
        parts.append("-")
    try:
        parts.append(os.readlink("/proc/self/ns/net"))
    except OSError:
        parts.append("-")
    for directory in ("/dev/shm", tempfile.gettempdir()):
        try:
            st = os.stat(directory)
            parts.append("%d:%d" % (st.st_dev, st.st_ino))
        except OSError:
            parts.append("-")
    return "|".join(parts)


class HostLayout:
    """Where this rank's host stands in the launch: the job's workers are its hosts (in the order of their lowest
    rank), and this host's ranks share one agent, started by the first of them."""

    def __init__(self, keys, rank):
        hosts = list(dict.fromkeys(keys))
        self.rank = rank
        self.ranks = len(keys)
        self.hosts = len(hosts)
        self.host = hosts.index(keys[rank])
        self.local_ranks = [r for r, k in enumerate(keys) if k == keys[rank]]
        self.first_ranks = [keys.index(k) for k in hosts]  # each host's first rank, in host order

    @classmethod
    def alone(cls, rank, world_size):
        """One rank per agent: the job's workers are the launch's ranks."""
        return cls([str(r) for r in range(world_size)], rank)

    @property
    def leads(self):
        """Whether this rank starts the host's agent."""
        return self.rank == self.local_ranks[0]


def _gatherer(exchange):
    """A function from this rank's string to every rank's list: ``exchange``, else the default process group's
    all_gather_object, else None (no process group: every rank's agent is its own)."""
    if exchange is not None:
        return exchange
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        def gather(mine):
            every = [None] * torch.distributed.get_world_size()
            torch.distributed.all_gather_object(every, mine)
            return every
        return gather
    return None


def start_agent(algo=None, rank=None, world_size=None, controller=None, job=None, shm_bytes=256 << 20,
                settings=None, start_timeout=60.0, join_timeout=120.0, operation_timeout=120.0, exchange=None,
                job_secret=None, per_host=None):
    """Starts this host's agent, or attaches to it, and returns once every rank has joined the job.

    Defaults come from the environment that ``switchml torchrun`` sets (SWITCHML_ALGO,
    SWITCHML_CONTROLLER, SWITCHML_JOB) and torch.distributed's (RANK, WORLD_SIZE). The ranks find their host's
    agent, and ``ring`` and ``ps`` exchange their endpoints, through the default process group where it is
    initialized, or through ``exchange`` (a function from this rank's string to every rank's list, called the same
    number of times on every rank, as the backend passes). Without either, this rank's agent is its own.
    ``per_host`` (default SWITCHML_AGENT_PER_HOST, "1") False gives each rank an agent of its own.
    ``job_secret`` binds the job to its ranks (docs/security.md, "Job secrets"); without one, the
    launcher's SWITCHML_JOB_SECRET, else one that rank 0 makes and broadcasts over the default process
    group where it is initialized, else none.
    """
    algo = algo or os.environ.get("SWITCHML_ALGO", "switchml")
    if rank is None:
        rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else int(os.environ["RANK"])
    if world_size is None:
        world_size = (torch.distributed.get_world_size() if torch.distributed.is_initialized()
                      else int(os.environ["WORLD_SIZE"]))
    controller = controller or os.environ.get("SWITCHML_CONTROLLER")
    job = job or os.environ.get("SWITCHML_JOB")
    if algo == "switchml" and (not controller or not job):
        raise AgentError("switchml needs the switch's controller and a job name (SWITCHML_CONTROLLER, SWITCHML_JOB; "
                         "switchml torchrun sets both)")
    if algo == "switchml":
        job_secret = job_secret or _shared_secret()
    if per_host is None:
        per_host = os.environ.get("SWITCHML_AGENT_PER_HOST", "1").strip() != "0"
    gather = _gatherer(exchange)
    layout = HostLayout(gather(host_key()), rank) if per_host and gather is not None else HostLayout.alone(rank, world_size)
    # Where the agents are goes round every rank (a collective), unless each rank has its own.
    gather_place = gather if layout.hosts < layout.ranks else None
    agent = None
    try:
        if layout.leads:
            try:
                agent = _launch_agent(algo, layout, controller, job, job_secret, shm_bytes, settings, start_timeout,
                                      operation_timeout)
            except BaseException as e:
                if gather_place is not None:  # the others wait to hear where it is: tell them why it is nowhere
                    gather_place("!" + str(e).replace("\n", " "))
                raise
            if gather_place is not None:
                gather_place("%s|%s" % (agent._directory, agent._shm_path))
        else:
            place = gather_place("-")[layout.local_ranks[0]]
            if place.startswith("!"):
                raise AgentError("rank %d could not start this host's agent: %s" % (layout.local_ranks[0], place[1:]))
            directory, shm_path = place.split("|", 1)
            agent = Agent(None, os.path.join(directory, "agent.sock"), shm_path, os.path.join(directory, "agent.log"),
                          directory, operation_timeout, leader=layout.local_ranks[0])
        agent._connect(start_timeout, join_timeout, algo, layout, gather)
    except BaseException:
        if agent is not None:
            agent.close()
        raise
    return agent


def _launch_agent(algo, layout, controller, job, job_secret, shm_bytes, settings, start_timeout, operation_timeout):
    """Starts the host's agent process for ``layout``'s local ranks (this rank is the first of them)."""
    directory = tempfile.mkdtemp(prefix="switchml-agent-%d-" % layout.rank)
    shm_dir = "/dev/shm" if os.path.isdir("/dev/shm") else directory
    sock_path = os.path.join(directory, "agent.sock")
    shm_path = os.path.join(shm_dir, "switchml-%d-%d-%d" % (os.getpid(), layout.rank, time.monotonic_ns()))
    log_path = os.path.join(directory, "agent.log")
    launch, env, archive = _agent_launch()
    if algo == "switchml" and job_secret:
        env = dict(os.environ if env is None else env, SWITCHML_JOB_SECRET=job_secret)
    command = launch + [
        "--algo", algo, "--rank", str(layout.host), "--workers", str(layout.hosts),
        "--local-ranks", ",".join(str(r) for r in layout.local_ranks), "--ranks", str(layout.ranks),
        "--socket", sock_path, "--shm", shm_path, "--shm-bytes", str(shm_bytes),
        "--connect-timeout", "PT%dS" % max(1, int(start_timeout)),
        "--operation-timeout", "PT%dS" % max(1, int(operation_timeout))]
    if algo == "switchml":
        command += ["--controller", controller, "--job", job]
    settings = dict(settings or {})
    if algo != "switchml" and "localAddress" not in settings and os.environ.get("MASTER_ADDR"):
        # The TCP baselines' listeners: on the address other hosts reach this one by (the agent's
        # default is loopback, which serves one host only).
        settings["localAddress"] = local_address_toward(os.environ["MASTER_ADDR"])
    for name, value in settings.items():
        command += ["--set", "%s=%s" % (name, value)]
    log = open(log_path, "wb")
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env,
                               preexec_fn=_die_with_parent)
    log.close()
    return Agent(process, sock_path, shm_path, log_path, directory, operation_timeout, archive)


class Agent:
    """A rank's connection to its host's agent: ``allreduce_async`` reduces a tensor over all ranks (the comm hook's
    state). The rank that started the agent's process (``process``) waits for it at close; the host's other ranks
    (``leader`` names the one that started it) only attach."""

    def __init__(self, process, sock_path, shm_path, log_path, directory, operation_timeout, archive=None, leader=None):
        self._process = process
        self._leader = leader
        self._archive = archive
        self._sock_path = sock_path
        self._shm_path = shm_path
        self._log_path = log_path
        self._directory = directory
        self._operation_timeout = operation_timeout
        self._sock = None
        self._file = None
        self._mm = None
        self._lock = threading.Condition()
        self._pending = collections.deque()  # (id, offset, nbytes, tensor, view, future, started)
        self._next_id = 0
        self._head = 0
        self._error = None
        self._closing = False
        self._reader = None
        self.rank = None
        self.world_size = None
        self.local_ranks = None  # this host's ranks, which share the agent
        self.aggregation_seconds = 0.0  # time with at least one all-reduce in flight
        self._busy_since = None
        atexit.register(self.close)

    # ---- start-up

    def _connect(self, start_timeout, join_timeout, algo, layout, gather=None):
        deadline = time.monotonic() + start_timeout
        while True:
            if self._process is not None and self._process.poll() is not None:
                raise AgentError(self._why("the agent exited before it listened"))
            if time.monotonic() > deadline:
                raise AgentError(self._why("the agent did not listen on %s within %.0f s" % (self._sock_path, start_timeout)))
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(max(1.0, deadline - time.monotonic()))
            try:
                sock.connect(self._sock_path)
                self._sock = sock
                break
            except (FileNotFoundError, ConnectionRefusedError):
                # The socket's file appears when the agent binds, a moment before it listens.
                sock.close()
                time.sleep(0.05)
        self._file = self._sock.makefile("rb")
        self._send("RANK %d" % layout.rank)
        hello = self._line("the agent's HELLO (it waits for every rank of this host to connect)").split(" ")
        if hello[0] != "HELLO" or len(hello) != 5:
            raise AgentError(self._why("unexpected greeting from the agent: %r" % " ".join(hello)))
        # The agent's registered algorithm says whether it exchanges endpoints: "-" when it needs none (the switch).
        # Every rank of a host hears the same; the job's workers are the hosts, named by their first ranks.
        peers = "-"
        if hello[4] != "-":
            if gather is None:
                raise AgentError("%s exchanges endpoints through torch.distributed: call init_process_group first" % algo)
            every = gather(hello[4])
            peers = ",".join(every[r] for r in layout.first_ranks)
        self._send("JOIN " + peers)
        self._sock.settimeout(join_timeout)
        ready = self._line("every rank joining the job (join timeout %.0f s)" % join_timeout).split(" ")
        if ready[0] != "READY" or len(ready) != 5:
            raise AgentError(self._why("the agent could not join the job: " + " ".join(ready[1:])))
        self.rank, self.world_size = int(ready[1]), int(ready[2])
        self.local_ranks = list(layout.local_ranks)
        offset, length = int(ready[3]), int(ready[4])
        with open(self._shm_path, "r+b") as f:
            self._mm = mmap.mmap(f.fileno(), length, offset=offset)
        # Short reads so the reader notices close() and bounds every wait on the agent by itself.
        self._sock.settimeout(0.5)
        self._reader = threading.Thread(target=self._read_completions, name="switchml-agent-reader", daemon=True)
        self._reader.start()

    def _line(self, waiting_for):
        try:
            line = self._file.readline()
        except socket.timeout:
            raise AgentError(self._why("timed out waiting for " + waiting_for)) from None
        if not line:
            raise AgentError(self._why("the agent closed the connection while we waited for " + waiting_for))
        return line.decode("utf-8").rstrip("\n")

    def _send(self, line):
        self._sock.sendall((line + "\n").encode("utf-8"))

    def _why(self, what):
        """What happened, with the agent's exit code and the end of its log."""
        if self._process is None:
            state = "the host's agent, started by rank %d" % self._leader
        else:
            code = self._process.poll()
            if code is None:
                try:
                    code = self._process.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    code = None
            state = "agent still running" if code is None else "agent exited with code %d" % code
        try:
            with open(self._log_path, "rb") as f:
                tail = f.read()[-2000:].decode("utf-8", "replace").strip()
        except OSError:
            tail = ""
        return "%s (%s)%s" % (what, state, ("; its log ends:\n" + tail) if tail else "")

    # ---- all-reduce

    def allreduce_async(self, tensor, op="mean"):
        """Reduces ``tensor`` over all ranks, in place; returns a ``torch.futures.Future`` of it.
        Several may be in flight; they complete in order.

        The agent reduces float32 and int32; float16, bfloat16 and float64 are reduced as float32,
        int8, uint8 and int16 as int32 (converted while copied into the shared memory and back),
        int64 exactly as three int32 limbs. Non-contiguous tensors are read and written through
        their strides; a tensor on a device (CUDA) is staged through pinned host memory."""
        if op not in ("sum", "mean"):
            raise ValueError("op must be 'sum' or 'mean', not %r" % op)
        if tensor.dtype not in SUPPORTED_DTYPES:
            raise TypeError("the agent reduces %s tensors, not %s" % (
                ", ".join(str(d).replace("torch.", "") for d in SUPPORTED_DTYPES), tensor.dtype))
        if tensor.device.type != "cpu":
            return self._allreduce_staged(tensor, op)
        if tensor.dtype == torch.int64:
            return self._allreduce_int64(tensor, op)
        return self._submit(tensor, _WIRE[tensor.dtype], op)

    def _allreduce_staged(self, tensor, op, pin=None):
        """A device tensor: copied to (pinned, when CUDA is there) host memory, reduced, copied back."""
        host = stage_to_host(tensor, pin)
        # A future holding CUDA tensors must say so (its devices), or completing it fails.
        devices = [tensor.device] if tensor.device.type == "cuda" else None
        return chain(self.allreduce_async(host, op), lambda value: unstage_from_host(tensor, value), devices)

    def _allreduce_int64(self, tensor, op):
        """int64 as limbs: x = a*2^42 + b*2^21 + c with b, c in [0, 2^21) and a = x >> 42, each summed
        as int32 (exact for up to 1023 ranks), then recombined in int64 (wrapping as int64 sums do).
        'mean' truncates toward zero, as the agent's int32 mean does."""
        if self.world_size is not None and self.world_size > _MAX_LIMB_WORKERS:
            raise ValueError("int64 all-reduces are exact for up to %d ranks, not %d" % (_MAX_LIMB_WORKERS, self.world_size))
        x = tensor.reshape(-1).to(torch.int64)
        mask = (1 << _LIMB_BITS) - 1
        limbs = torch.stack([x >> (2 * _LIMB_BITS), (x >> _LIMB_BITS) & mask, x & mask]).to(torch.int32)
        world = self.world_size

        def combine(value):
            summed = value.to(torch.int64)
            total = (summed[0] << (2 * _LIMB_BITS)) + (summed[1] << _LIMB_BITS) + summed[2]
            if op == "mean":
                total = torch.div(total, world, rounding_mode="trunc")
            tensor.copy_(total.view(tensor.shape))
            return tensor
        return chain(self._submit(limbs, torch.int32, "sum"), combine)

    def _submit(self, tensor, wire, op):
        """Copies ``tensor`` (CPU) into a free region as ``wire`` (float32 or int32), asks the agent."""
        if tensor.numel() == 0:
            done = torch.futures.Future()
            done.set_result(tensor)
            return done
        nbytes = tensor.numel() * 4  # float32 or int32
        size = len(self._mm) if self._mm is not None else 0
        if nbytes > size:
            part = size // 2 // _ALIGN * _ALIGN // 4
            if part == 0:
                raise ValueError("a tensor of %d bytes does not fit in the agent's shared memory of %d bytes (shm_bytes)" % (nbytes, size))
            return self._submit_in_parts(tensor, wire, op, part)
        future = torch.futures.Future()
        with self._lock:
            self._raise_if_failed()
            offset = self._allocate(nbytes)
            view = torch.frombuffer(self._mm, dtype=wire, count=tensor.numel(), offset=offset)
            view.view(tensor.shape).copy_(tensor)  # converts the dtype, reads through any strides
            request_id = self._next_id
            self._next_id += 1
            if not self._pending:
                self._busy_since = time.monotonic()
            self._pending.append((request_id, offset, nbytes, tensor, view, future, time.monotonic()))
            try:
                self._send("R %d %d %d %s %s" % (request_id, offset, tensor.numel(), op, _TYPES[wire]))
            except OSError as e:
                self._fail("cannot send to the agent: %s" % e)
                raise self._error from None
        return future

    def _submit_in_parts(self, tensor, wire, op, part):
        """A tensor larger than the shared memory (DDP's first step is one bucket of the whole model's gradients):
        reduced as consecutive parts of ``part`` elements, half the shared memory each, submitted in order (every
        rank splits it the same way), each waiting for room as any tensor does; the future completes with the last."""
        flat = tensor.reshape(-1)  # a view of a contiguous tensor; a copy of another, written back at the end
        futures = [self._submit(flat[i:i + part], wire, op) for i in range(0, flat.numel(), part)]

        def written_back(_):
            for f in futures:
                f.value()  # raises the first part's error
            if not tensor.is_contiguous():
                tensor.copy_(flat.view(tensor.shape))
            return tensor
        return chain(torch.futures.collect_all(futures), written_back)

    def _allocate(self, nbytes):
        """The next free region of the ring; waits (bounded) for older all-reduces to free one."""
        rounded = (nbytes + _ALIGN - 1) // _ALIGN * _ALIGN
        size = len(self._mm)
        deadline = time.monotonic() + self._operation_timeout
        while True:
            if not self._pending:
                return self._take(0, rounded)
            tail = self._pending[0][1]
            if self._head > tail:  # free: [head, size) and [0, tail)
                if self._head + rounded <= size:
                    return self._take(self._head, rounded)
                if rounded <= tail:
                    return self._take(0, rounded)
            elif self._head < tail and self._head + rounded <= tail:  # free: [head, tail)
                return self._take(self._head, rounded)
            if not self._lock.wait(timeout=max(0.0, deadline - time.monotonic())) and time.monotonic() > deadline:
                raise AgentError(self._why("no room in the shared memory for %d bytes within %.0f s" % (nbytes, self._operation_timeout)))
            self._raise_if_failed()

    def _take(self, offset, rounded):
        self._head = offset + rounded
        return offset

    def _raise_if_failed(self):
        if self._error is not None:
            raise self._error
        if self._closing:
            raise AgentError("the agent is closed")

    def _read_completions(self):
        buffered = b""
        while True:
            try:
                chunk = self._sock.recv(65536)
            except socket.timeout:
                with self._lock:
                    if self._closing and not self._pending:
                        return
                    if self._pending and time.monotonic() - self._pending[0][6] > self._operation_timeout + 10:
                        self._fail("all-reduce %d got no answer within %.0f s" % (self._pending[0][0], self._operation_timeout))
                        return
                continue
            except OSError as e:
                with self._lock:
                    if not self._closing:
                        self._fail("cannot read from the agent: %s" % e)
                return
            if not chunk:
                with self._lock:
                    if not self._closing or self._pending:
                        self._fail("the agent closed the connection")
                return
            buffered += chunk
            *lines, buffered = buffered.split(b"\n")
            for raw in lines:
                line = raw.decode("utf-8")
                if not self._handle(line):
                    return

    def _handle(self, line):
        kind, _, rest = line.partition(" ")
        if kind == "D":
            with self._lock:
                request_id, _, _, tensor, view, future, _ = self._pending.popleft()
                if int(rest) != request_id:
                    self._fail("the agent completed %s, expected %d" % (rest, request_id))
                    return False
                tensor.copy_(view.view(tensor.shape))
                if not self._pending:
                    self.aggregation_seconds += time.monotonic() - self._busy_since
                self._lock.notify_all()
            future.set_result(tensor)
            return True
        if kind == "BYE":
            return False
        with self._lock:
            reason = rest.partition(" ")[2] if kind == "E" else rest
            self._fail("the agent failed: " + reason)
        return False

    def _fail(self, what):
        """Called with the lock held: every pending and later all-reduce raises why."""
        if self._error is None:
            self._error = AgentError(self._why(what))
        while self._pending:
            future = self._pending.popleft()[5]
            future.set_exception(self._error)
        self._lock.notify_all()

    # ---- shut-down

    def close(self, timeout=30.0):
        """Waits for the all-reduces in flight, then tells the agent to leave the job and waits for it."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            self._lock.notify_all()
        try:
            if self._sock is not None and self._error is None:
                self._send("BYE")
        except OSError:
            pass
        if self._reader is not None:
            self._reader.join(timeout)
        if self._sock is not None:
            self._sock.close()
        if self._mm is not None:
            self._pending.clear()
            try:
                self._mm.close()
            except BufferError:
                pass  # a tensor still views the mapping; it goes with the process
        atexit.unregister(self.close)
        if self._process is None:
            return  # the host's agent is its starter's to wait for and clean up after
        try:
            # It leaves the job once every local rank has said BYE, which the others do as they close.
            self._process.wait(timeout=max(timeout, self._operation_timeout))
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=timeout)
        if self._archive is not None:
            self._archive.settle(self._process.returncode)
        for path in (self._shm_path, self._sock_path):
            try:
                os.unlink(path)
            except OSError:
                pass
        shutil.rmtree(self._directory, ignore_errors=True)
