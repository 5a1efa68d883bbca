"""Several processes, one mesh: start-up on JAX's own distributed runtime (``jax.distributed``).

Every process runs the same program.  :func:`initialize` connects them through a
coordinator service that process 0 starts; afterwards ``jax.devices()`` lists every
process's devices, and meshes built by ``build_mesh`` (so every ``@mesh`` function) span
them all.  Settings come from :func:`initialize`'s arguments, else from the environment
variables below, else from JAX's cluster auto-detection (Cloud TPU pods, SLURM, Open MPI,
Kubernetes).  ``meshify launch`` sets the variables for its child processes.

Start-up fails fast, with one :class:`~meshify.errors.StartupError` naming the process and
a fix, instead of JAX's C++ abort: impossible ids are rejected before any connection, the
coordinator's address is probed first, a job whose processes do not all register within
the time-out ends with a message, and once connected every process checks that the job
has the process and device counts it expects.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import jax
from jax._src import distributed as _jax_distributed  # the settings in use; no public accessor

from meshify.errors import StartupError

__all__ = ["initialize", "Topology", "ENV_COORDINATOR", "ENV_BIND_ADDRESS", "ENV_NUM_PROCESSES",
           "ENV_PROCESS_ID", "ENV_CPU_DEVICES", "ENV_INIT_TIMEOUT"]

#: ``host:port`` of process 0's coordinator service (JAX reads it too).
ENV_COORDINATOR = "JAX_COORDINATOR_ADDRESS"
#: Where process 0's service listens, ``host:port``; JAX's default is every interface.
ENV_BIND_ADDRESS = "JAX_COORDINATOR_BIND_ADDRESS"
#: How many processes the job has.
ENV_NUM_PROCESSES = "JAX_NUM_PROCESSES"
#: This process's id, 0 .. processes - 1.
ENV_PROCESS_ID = "JAX_PROCESS_ID"
#: Simulated CPU devices in this process (CPU collectives over gloo); unset on GPU/TPU.
ENV_CPU_DEVICES = "MESHIFY_CPU_DEVICES"
#: Seconds to wait for the coordinator and for every process to register.
ENV_INIT_TIMEOUT = "MESHIFY_INIT_TIMEOUT"

DEFAULT_TIMEOUT_S = 300  # JAX's own default; pods can take minutes to schedule every host


@dataclass(frozen=True, slots=True)
class Topology:
    """Where this process stands in the job.

    Attributes:
        process_id: this process's index, 0 .. num_processes - 1.
        num_processes: processes in the job.
        local_devices: devices this process drives.
        devices: devices in the job, across all processes (what meshes are built on).
        platform: ``cpu``, ``gpu`` or ``tpu``.
    """

    process_id: int
    num_processes: int
    local_devices: int
    devices: int
    platform: str

    def __str__(self) -> str:
        return (f"process {self.process_id} of {self.num_processes}, "
                f"{self.local_devices} of {self.devices} {self.platform} devices")


@dataclass(frozen=True, slots=True)
class _Settings:
    coordinator: str | None
    num_processes: int | None
    process_id: int | None
    cpu_devices: int | None
    timeout_s: float
    heartbeat_timeout_s: int | None
    bind_address: str | None

    def who(self) -> str:
        if self.process_id is None or self.num_processes is None:
            return "this process"
        return f"process {self.process_id} of {self.num_processes}"


def initialize(coordinator: str | None = None, num_processes: int | None = None, process_id: int | None = None,
               *, cpu_devices: int | None = None, timeout_s: float | None = None,
               heartbeat_timeout_s: int | None = None, bind_address: str | None = None) -> Topology:
    """Joins this process to a multi-process job; call it first, before any JAX operation.

    A thin layer over ``jax.distributed.initialize``.  Every argument left out is read
    from the environment (``JAX_COORDINATOR_ADDRESS``, ``JAX_NUM_PROCESSES``,
    ``JAX_PROCESS_ID``, ``MESHIFY_CPU_DEVICES``, ``MESHIFY_INIT_TIMEOUT``,
    ``JAX_COORDINATOR_BIND_ADDRESS``); what is still missing JAX detects on Cloud TPU,
    SLURM, Open MPI and Kubernetes.  Calling it again (``meshify launch`` already did)
    returns the same topology.

    Args:
        coordinator: ``host:port`` of process 0, where it starts the coordinator service.
        num_processes: processes in the job.
        process_id: this process's index, 0 .. num_processes - 1, unique in the job.
        cpu_devices: simulate this many CPU devices in this process (CPU collectives run
            over gloo); leave it out on GPU and TPU.
        timeout_s: seconds to wait for the coordinator and for every process to join.
        heartbeat_timeout_s: seconds without a heartbeat before the job counts a process
            as dead and stops (JAX's default: 100).
        bind_address: ``host:port`` the coordinator service listens on (process 0 only;
            default: every interface, port of ``coordinator``).

    Returns:
        This process's :class:`Topology`.

    Raises:
        StartupError: bad settings, an unreachable coordinator, processes that did not
            all join in time, or processes that disagree on process or device counts.
    """
    try:
        settings = _settings(coordinator, num_processes, process_id, cpu_devices, timeout_s,
                             heartbeat_timeout_s, bind_address)
        if jax.distributed.is_initialized():
            return _already_initialized(settings)
        _validate(settings)
        _configure_cpu(settings)
        if settings.coordinator is not None and settings.process_id == 0:
            _check_port_free(settings)
        elif settings.coordinator is not None and settings.process_id is not None:
            _wait_for_coordinator(settings)
        _connect(settings)
        return _check_topology(settings)
    except StartupError as e:  # keep meshify's own frames out of the user's traceback
        raise e.with_traceback(None) from None


# -- settings ----------------------------------------------------------------------------------


def _settings(coordinator, num_processes, process_id, cpu_devices, timeout_s, heartbeat_timeout_s,
              bind_address) -> _Settings:
    env = os.environ
    timeout = timeout_s if timeout_s is not None else _env_number(ENV_INIT_TIMEOUT, float)
    return _Settings(
        coordinator=coordinator or env.get(ENV_COORDINATOR) or None,
        num_processes=num_processes if num_processes is not None else _env_number(ENV_NUM_PROCESSES, int),
        process_id=process_id if process_id is not None else _env_number(ENV_PROCESS_ID, int),
        cpu_devices=cpu_devices if cpu_devices is not None else _env_number(ENV_CPU_DEVICES, int),
        timeout_s=timeout if timeout is not None else DEFAULT_TIMEOUT_S,
        heartbeat_timeout_s=heartbeat_timeout_s,
        bind_address=bind_address or env.get(ENV_BIND_ADDRESS) or None,
    )


def _env_number(name: str, kind: type) -> int | float | None:
    text = os.environ.get(name, "").strip()
    if not text:
        return None
    try:
        return kind(text)
    except ValueError:
        raise StartupError(f"environment variable {name}={text!r} is not {'an integer' if kind is int else 'a number'}",
                           fix=f"set {name} to a number, or unset it") from None


def _validate(s: _Settings) -> None:
    """Collects every impossible setting, then raises one StartupError."""
    problems = []
    if s.num_processes is not None and (not isinstance(s.num_processes, int) or s.num_processes < 1):
        problems.append(f"num_processes is {s.num_processes!r}; it must be a positive integer")
    if s.process_id is not None and (not isinstance(s.process_id, int) or s.process_id < 0):
        problems.append(f"process_id is {s.process_id!r}; it must be an integer >= 0")
    elif (s.process_id is not None and isinstance(s.num_processes, int) and s.num_processes >= 1
          and s.process_id >= s.num_processes):
        problems.append(f"process_id is {s.process_id} but the job has {s.num_processes} processes "
                        f"(ids 0 to {s.num_processes - 1})")
    for name, address in (("coordinator", s.coordinator), ("bind_address", s.bind_address)):
        if address is not None and _split_address(address) is None:
            problems.append(f"{name} {address!r} is not host:port")
    if s.cpu_devices is not None and (not isinstance(s.cpu_devices, int) or s.cpu_devices < 1):
        problems.append(f"cpu_devices is {s.cpu_devices!r}; it must be a positive integer")
    if not s.timeout_s > 0:
        problems.append(f"timeout_s is {s.timeout_s!r}; it must be positive")
    if problems:
        raise StartupError(
            "meshify.runtime.initialize(): " + (problems[0] if len(problems) == 1
                                                 else "\n  - " + "\n  - ".join(problems)),
            fix="give every process the same coordinator (host:port of process 0) and process count, "
                "and each one its own id from 0 to count - 1") from None


def _split_address(address: str) -> tuple[str, int] | None:
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        return None
    return host.strip("[]"), int(port)


# -- before connecting -------------------------------------------------------------------------


def _configure_cpu(s: _Settings) -> None:
    """Simulated CPU devices for this process, and gloo for collectives between processes."""
    if s.cpu_devices is None:
        return
    try:
        jax.config.update("jax_num_cpu_devices", s.cpu_devices)
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    except RuntimeError:
        raise StartupError(f"meshify.runtime.initialize() came after JAX started its backend; {s.who()} cannot "
                           f"simulate {s.cpu_devices} CPU devices any more",
                           fix="call meshify.runtime.initialize() right after `import jax`, before any JAX "
                               "operation (jax.devices(), arrays, jit)") from None


def _check_port_free(s: _Settings) -> None:
    """Process 0 is about to listen: fail now if another program (or another process 0) has the port."""
    host, port = _split_address(s.bind_address or s.coordinator)  # type: ignore[misc]
    host = "" if s.bind_address is None else host  # JAX's default binds every interface
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # ignore TIME_WAIT, not live listeners
        try:
            probe.bind((host, port))
        except OSError as e:
            raise StartupError(f"process 0 cannot start the coordinator on port {port}: {e.strerror} "
                               f"(another program, or another process started as process 0, holds it)",
                               fix="choose a free port, and make sure exactly one process has id 0") from None


def _wait_for_coordinator(s: _Settings) -> None:
    """Waits until process 0's coordinator accepts TCP connections, at most ``timeout_s``."""
    host, port = _split_address(s.coordinator)  # type: ignore[misc]
    deadline = time.monotonic() + s.timeout_s
    last = ""
    while True:
        try:
            with socket.create_connection((host, port), timeout=min(2.0, s.timeout_s)):
                return
        except OSError as e:
            last = e.strerror or str(e)
        if time.monotonic() >= deadline:
            raise StartupError(
                f"{s.who()} cannot reach the coordinator at {s.coordinator} (waited {s.timeout_s:g} s; "
                f"last error: {last})",
                fix="start process 0 (it runs the coordinator), check the host and port every process was "
                    "given, and that this machine can reach it; MESHIFY_INIT_TIMEOUT / timeout_s waits longer",
            ) from None
        time.sleep(0.25)


# -- connecting --------------------------------------------------------------------------------


def _connect(s: _Settings) -> None:
    """``jax.distributed.initialize``; registration that outlasts the time-out ends the process with a message.

    JAX aborts the process (a C++ stack trace, after its own time-out) when not every
    process registers; a watchdog says why first and exits with status 1.
    """
    kwargs = {"initialization_timeout": int(s.timeout_s) + 30}  # the watchdog speaks first
    if s.heartbeat_timeout_s is not None:
        kwargs["heartbeat_timeout_seconds"] = s.heartbeat_timeout_s
    if s.bind_address is not None:
        kwargs["coordinator_bind_address"] = s.bind_address
    expected = f"all {s.num_processes} processes" if s.num_processes is not None else "every process"
    message = (f"meshify: error[{StartupError.code}]: {s.who()} reached the coordinator at {s.coordinator} but "
               f"not {expected} joined within {s.timeout_s:g} s\n"
               f"  fix: start all processes with the same coordinator and process count, each with its own id "
               f"(0 to count - 1); MESHIFY_INIT_TIMEOUT / timeout_s waits longer\n")
    try:
        with _watchdog(s.timeout_s, message):
            jax.distributed.initialize(s.coordinator, s.num_processes, s.process_id, **kwargs)
    except RuntimeError as e:  # the backend is already running
        raise StartupError(f"meshify.runtime.initialize(): {e}",
                           fix="call meshify.runtime.initialize() right after `import jax`, before any JAX "
                               "operation") from None
    except ValueError as e:  # nothing configured and no cluster detected
        raise StartupError(
            f"meshify.runtime.initialize(): {e} (no coordinator given, {ENV_COORDINATOR} unset, and JAX detected "
            "no TPU pod, SLURM, Open MPI or Kubernetes job)",
            fix=f"pass coordinator=, num_processes= and process_id=, or set {ENV_COORDINATOR}, "
                f"{ENV_NUM_PROCESSES} and {ENV_PROCESS_ID}, or run the script with `meshify launch`") from None


@contextmanager
def _watchdog(seconds: float, message: str) -> Iterator[None]:
    """Runs the body; if it outlasts ``seconds``, writes ``message`` to stderr and exits the process with 1."""
    done = threading.Event()

    def expire() -> None:
        if not done.wait(seconds):
            sys.stderr.write(message)
            sys.stderr.flush()
            os._exit(1)

    threading.Thread(target=expire, name="meshify-startup-watchdog", daemon=True).start()
    try:
        yield
    finally:
        done.set()


# -- after connecting --------------------------------------------------------------------------


def _check_topology(s: _Settings) -> Topology:
    """Starts the backend and checks that the job is what this process was told it is."""
    devices = jax.devices()
    per_process = Counter(d.process_index for d in devices)
    count, index = jax.process_count(), jax.process_index()
    problems = []
    if s.num_processes is not None and count != s.num_processes:
        problems.append(f"this process was started for {s.num_processes} processes but the job has {count}")
    if s.process_id is not None and index != s.process_id:
        problems.append(f"this process was started as process {s.process_id} but joined as {index}")
    if len(set(per_process.values())) > 1:
        listing = ", ".join(f"process {p}: {n}" for p, n in sorted(per_process.items()))
        problems.append(f"processes have different device counts ({listing})")
    if problems:
        raise StartupError(
            f"process {index} of {count}: the job is not what this process expects: "
            + ("; ".join(problems) if len(problems) == 1 else "\n  - " + "\n  - ".join(problems)),
            fix="start every process with the same process count and the same number of devices "
                f"(meshify launch --devices-per-process N, or {ENV_CPU_DEVICES}=N on CPU)") from None
    return _topology()


def _topology() -> Topology:
    devices = jax.devices()
    return Topology(jax.process_index(), jax.process_count(), len(jax.local_devices()), len(devices),
                    devices[0].platform)


def _already_initialized(s: _Settings) -> Topology:
    """A second call: fine if it asks for the same job (``meshify launch`` made the first)."""
    state = _jax_distributed.global_state
    clashes = [f"{what} {asked!r} (running: {running!r})"
               for what, asked, running in (("coordinator", s.coordinator, state.coordinator_address),
                                            ("num_processes", s.num_processes, state.num_processes),
                                            ("process_id", s.process_id, state.process_id))
               if asked is not None and asked != running]
    if clashes:
        raise StartupError("meshify.runtime.initialize() was called again with different settings: "
                           + ", ".join(clashes),
                           fix="initialize once per process; later calls may pass no arguments") from None
    return _topology()
