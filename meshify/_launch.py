"""``meshify launch``: one script as N local processes on simulated CPU devices, supervised.

For trying multi-host code on one machine.  Each child process gets ``devices_per_process``
simulated CPU devices, JAX's distributed runtime with its coordinator on 127.0.0.1 and a
free port, and gloo for CPU collectives; together their devices form one mesh.  The
settings travel in environment variables that ``meshify.runtime.initialize`` reads (the
child runs it before the script, see ``_launch_child.py``).

The launcher is the job's supervisor: every child's output comes through prefixed with
``[i]``, and when one child fails (exits non-zero or is killed) the others are stopped at
once and ``launch`` returns non-zero after one line naming the process and what happened
to it, so a dead process never leaves the rest hanging in a collective.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from meshify.errors import StartupError
from meshify.runtime._distributed import (
    ENV_BIND_ADDRESS,
    ENV_COORDINATOR,
    ENV_CPU_DEVICES,
    ENV_INIT_TIMEOUT,
    ENV_NUM_PROCESSES,
    ENV_PROCESS_ID,
)

__all__ = ["launch", "ENV_PARENT"]

#: The launcher's pid, so that a child can end itself when the launcher dies.
ENV_PARENT = "MESHIFY_LAUNCH_PARENT"
#: How a timed-out launch exits (like coreutils' timeout).
TIMEOUT_STATUS = 124

_DEVICE_COUNT_FLAG = re.compile(r"--xla_force_host_platform_device_count=\S*")
#: gloo's line for every communicator it sets up (or a piece of one, when threads interleave): noise.
_GLOO_CONNECTED = re.compile(r"\[Gloo\] Rank \d+ is connected to|peer ranks\. Expected number of connected peer")


@dataclass
class _Child:
    index: int
    process: subprocess.Popen
    threads: list[threading.Thread] = field(default_factory=list)
    ended: float | None = None  # when it exited (monotonic), as seen by its waiter thread

    def describe(self, total: int) -> str:
        return f"process {self.index} of {total} (pid {self.process.pid})"

    def wait(self) -> None:
        self.process.wait()
        self.ended = time.monotonic()

    @property
    def failed(self) -> bool:
        return self.ended is not None and self.process.returncode != 0


def launch(script: str | Path, args: Sequence[str] = (), *, processes: int, devices_per_process: int = 4,
           timeout_s: float | None = None, init_timeout_s: float = 60.0,
           stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Runs ``script`` as ``processes`` local processes sharing one job; returns the exit status.

    Args:
        script: the Python file each process runs as ``__main__``.
        args: its command-line arguments.
        processes: how many processes.
        devices_per_process: simulated CPU devices in each.
        timeout_s: stop everything after this many seconds (None: no limit).
        init_timeout_s: how long start-up may wait for every process to join.
        stdout, stderr: where the children's prefixed output and the launcher's messages go.

    Returns:
        0 when every process exits 0; else the first failure's exit status (128 + signal
        number for a killed process, 124 on time-out).
    """
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    _validate(Path(script), processes, devices_per_process)
    env = _child_environment(f"127.0.0.1:{_free_port()}", processes, devices_per_process, init_timeout_s)
    started = time.monotonic()
    children: list[_Child] = []
    try:
        for index in range(processes):
            children.append(_start(index, script, args, env, stdout, stderr))
        failure, status = _supervise(children, started, timeout_s)
    except KeyboardInterrupt:
        failure, status = "interrupted", 130
    finally:
        _stop(children)
    if failure is not None:
        _say(stderr, failure)
    return status


def _validate(script: Path, processes: int, devices_per_process: int) -> None:
    problems = []
    if processes < 1:
        problems.append(f"-n must be at least 1, not {processes}")
    if devices_per_process < 1:
        problems.append(f"--devices-per-process must be at least 1, not {devices_per_process}")
    if not script.is_file():
        problems.append(f"{script}: no such file")
    if problems:
        raise StartupError("meshify launch: " + "; ".join(problems),
                           fix="meshify launch -n PROCESSES [--devices-per-process N] SCRIPT [ARGS...]")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _child_environment(address: str, processes: int, devices: int, init_timeout_s: float) -> dict[str, str]:
    """The environment shared by every child; each adds its own process id."""
    env = {k: v for k, v in os.environ.items() if k != "MESHIFY_PLATFORM"}
    flags = _DEVICE_COUNT_FLAG.sub("", env.get("XLA_FLAGS", "")).strip()  # the count comes from ENV_CPU_DEVICES
    if flags:
        env["XLA_FLAGS"] = flags
    else:
        env.pop("XLA_FLAGS", None)
    env.update({
        "JAX_PLATFORMS": "cpu",
        ENV_COORDINATOR: address,
        ENV_BIND_ADDRESS: address,  # loopback only
        ENV_NUM_PROCESSES: str(processes),
        ENV_CPU_DEVICES: str(devices),
        ENV_INIT_TIMEOUT: f"{init_timeout_s:g}",
        ENV_PARENT: str(os.getpid()),
        "PYTHONUNBUFFERED": "1",
    })
    return env


def _start(index: int, script: str | Path, args: Sequence[str], env: dict[str, str],
           stdout: TextIO, stderr: TextIO) -> _Child:
    process = subprocess.Popen(
        [sys.executable, "-m", "meshify._launch_child", str(script), *args],
        env={**env, ENV_PROCESS_ID: str(index)}, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, errors="replace", bufsize=1,
        start_new_session=True)  # its own process group: stopping it stops whatever it started
    child = _Child(index, process)
    for source, sink in ((process.stdout, stdout), (process.stderr, stderr)):
        child.threads.append(threading.Thread(target=_pump, args=(source, sink, f"[{index}] "), daemon=True))
    child.threads.append(threading.Thread(target=child.wait, daemon=True))
    for thread in child.threads:
        thread.start()
    return child


_write_lock = threading.Lock()


def _pump(source: TextIO, sink: TextIO, prefix: str) -> None:
    """Copies a child's output line by line, prefixed with its index."""
    for line in source:
        if _GLOO_CONNECTED.search(line):
            continue
        with _write_lock:
            sink.write(prefix + line if line.endswith("\n") else prefix + line + "\n")
            sink.flush()
    source.close()


def _say(stream: TextIO, message: str) -> None:
    with _write_lock:
        stream.write(f"meshify launch: {message}\n")
        stream.flush()


def _supervise(children: list[_Child], started: float, timeout_s: float | None) -> tuple[str | None, int]:
    """Waits until all children exit 0, one fails, or time runs out; says which as (message, status)."""
    while True:
        failed = sorted((c for c in children if c.failed), key=lambda c: c.ended)  # type: ignore[arg-type, return-value]
        if failed:  # the first to fail is the cause; the others usually follow it
            return _failure_message(failed[0], children, started), _exit_status(failed[0].process.returncode)
        if all(c.ended is not None for c in children):
            return None, 0
        if timeout_s is not None and time.monotonic() - started > timeout_s:
            running = [str(c.index) for c in children if c.ended is None]
            return (f"timed out after {timeout_s:g} s; stopping the {len(children)} processes "
                    f"(still running: {', '.join(running)})"), TIMEOUT_STATUS
        time.sleep(0.05)


def _failure_message(child: _Child, children: list[_Child], started: float) -> str:
    assert child.ended is not None
    others = [c for c in children if c is not child]
    also = [f"process {c.index} {_how(c.process.returncode)}" for c in others if c.failed]
    running = sum(1 for c in others if c.ended is None)
    message = f"{child.describe(len(children))} {_how(child.process.returncode)} after {child.ended - started:.1f} s"
    if running:
        message += f"; stopping the other {running} process{'es' if running != 1 else ''}"
    if also:
        message += f" (then {'; '.join(also)})"
    return message


def _how(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"exited with status {code}"


def _exit_status(code: int) -> int:
    return 128 - code if code < 0 else code


def _stop(children: list[_Child]) -> None:
    """SIGKILL to every child still running, and to whatever it started; then waits for their output.

    Not SIGTERM: once one process is gone the job cannot go on, and JAX takes SIGTERM as a
    preemption notice and keeps running.
    """
    for child in children:
        if child.process.poll() is None:
            _signal_group(child.process, signal.SIGKILL)
    for child in children:
        for thread in child.threads:
            thread.join(timeout=5.0)


def _signal_group(process: subprocess.Popen, sig: signal.Signals) -> None:
    try:
        os.killpg(process.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass
