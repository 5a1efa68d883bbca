"""Several processes, one mesh: ``meshify launch``, ``initialize``, host data in and out.

The multi-process tests start real processes (2 x 4 simulated CPU devices, gloo
collectives, a coordinator on 127.0.0.1) and bound their own time with subprocess
time-outs; the single-process tests run here, on the suite's 8 devices.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import jax
import numpy as np
import pytest
from typer.testing import CliRunner

import meshify.runtime as mr
from meshify.cli import app
from meshify.errors import CallError, StartupError
from meshify.rewrite import convert_source

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = ROOT / "tests" / "multiprocess"
RTOL = 1e-5


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hybrid_script = _load(SCRIPTS / "hybrid.py", "meshify_multiprocess_hybrid")  # the launched script, run here too


def _env(**extra: str) -> dict[str, str]:
    """This environment without the suite's 8-device flag (each process gets its own count)."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    return {**env, "JAX_PLATFORMS": "cpu", **extra}


def _launch(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "meshify", "launch", *args], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, timeout=timeout, check=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _converted_hybrid(tmp_path: Path) -> Path:
    path = tmp_path / "hybrid_sharded.py"
    path.write_text(convert_source((ROOT / "examples" / "hybrid.py").read_text(), "examples/hybrid.py").text)
    return path


# -- 2 processes x 4 devices give the results of 1 process x 8 ---------------------------------


def test_converted_hybrid_on_two_processes_matches_one_process(tmp_path) -> None:
    converted = _converted_hybrid(tmp_path)
    proc = _launch("-n", "2", "--devices-per-process", "4", str(SCRIPTS / "hybrid.py"), str(converted),
                   str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    expected = hybrid_script.run(_load(converted, "hybrid_sharded").ffn_block)  # here: 1 process, 8 devices
    for process in (0, 1):
        got = np.load(tmp_path / f"process_{process}.npz")
        assert got["topology"].tolist() == [process, 2, 8]
        assert got["spans_processes"]  # the output lives on both processes' devices
        assert got["x_rows"].tolist() == [2 * process, 2 * process + 2]  # its half of the batch
        assert got["pair_processes"].tolist() == [0, 1]  # a 2-device mesh takes one device from each
        for name in ("full", "local", "jitted", "pair"):
            np.testing.assert_allclose(got[name], expected[name], rtol=RTOL, atol=1e-6, err_msg=name)


@pytest.mark.slow
def test_transformer_lm_five_steps_on_two_processes_match_one_process(tmp_path) -> None:
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    example = "examples/transformer_lm.py"
    single = subprocess.Popen([sys.executable, example, "--steps", "5", "--losses-out", str(one)], cwd=ROOT,
                              env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        multi = _launch("-n", "2", "--devices-per-process", "4", example, "--steps", "5", "--losses-out", str(two),
                        timeout=300)
        single_out = single.communicate(timeout=300)[0]
    finally:
        single.kill()
    assert single.returncode == 0, single_out
    assert multi.returncode == 0, multi.stdout + multi.stderr
    assert "[1] mesh: 2x4 (batch=2, model=4) on 8 cpu devices" in multi.stdout
    losses, reference = json.loads(two.read_text()), json.loads(one.read_text())
    assert len(losses) == 5
    np.testing.assert_allclose(losses, reference, rtol=RTOL)
    for process in (0, 1):  # both processes saw the same losses
        printed = re.findall(rf"^\[{process}\] step +\d+ +loss (\S+)$", multi.stdout, re.MULTILINE)
        assert [float(v) for v in printed] == [round(v, 5) for v in losses]


# -- faults: a dead process stops the job, with a message, in bounded time ---------------------


def _start_loop(tmp_path: Path, *flags: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "meshify", "launch", "-n", "2", "--devices-per-process", "4",
                             str(SCRIPTS / "collective_loop.py"), str(tmp_path), *flags],
                            cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(paths: list[Path], launcher: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not all(p.exists() and p.read_text() for p in paths):
        if launcher.poll() is not None or time.monotonic() > deadline:
            launcher.kill()
            out, err = launcher.communicate()
            pytest.fail(f"the job did not get going (exit {launcher.returncode}):\n{out}\n{err}")
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_killing_one_process_stops_the_job_with_a_clear_message(tmp_path) -> None:
    launcher = _start_loop(tmp_path)
    try:
        _wait_for([tmp_path / "pid_0", tmp_path / "pid_1"], launcher, 120)
        pids = [int((tmp_path / f"pid_{i}").read_text()) for i in (0, 1)]
        killed = time.monotonic()
        os.kill(pids[1], signal.SIGKILL)
        _, err = launcher.communicate(timeout=60)
        elapsed = time.monotonic() - killed
    finally:
        launcher.kill()
    assert elapsed < 60
    assert launcher.returncode != 0
    last = err.strip().splitlines()[-1]
    assert re.fullmatch(rf"meshify launch: process 1 of 2 \(pid {pids[1]}\) was killed by SIGKILL after "
                        r"[\d.]+ s; stopping the other 1 process", last), err
    assert not _alive(pids[0])


def test_an_exception_in_one_process_stops_the_others(tmp_path) -> None:
    launcher = _start_loop(tmp_path, "--fail", "1")
    try:
        _, err = launcher.communicate(timeout=120)
    finally:
        launcher.kill()
    assert launcher.returncode == 1, err
    assert "[1] RuntimeError: process 1 fails on purpose at step 3" in err
    assert re.search(r"^meshify launch: process 1 of 2 \(pid \d+\) exited with status 1 after", err, re.MULTILINE), err


# -- bad start-up input: a clear error in bounded time ------------------------------------------


def _join(*, process_id: int, num_processes: int = 2, devices: int = 4, port: int, timeout_s: int = 20
          ) -> subprocess.Popen:
    address = f"127.0.0.1:{port}"
    env = _env(JAX_COORDINATOR_ADDRESS=address, JAX_COORDINATOR_BIND_ADDRESS=address,
               JAX_NUM_PROCESSES=str(num_processes), JAX_PROCESS_ID=str(process_id),
               MESHIFY_CPU_DEVICES=str(devices), MESHIFY_INIT_TIMEOUT=str(timeout_s))
    return subprocess.Popen([sys.executable, str(SCRIPTS / "join.py")], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_processes_with_different_device_counts_both_refuse_to_start() -> None:
    port = _free_port()
    joins = [_join(process_id=0, devices=4, port=port), _join(process_id=1, devices=2, port=port)]
    try:
        results = [j.communicate(timeout=60) for j in joins]
    finally:
        for j in joins:
            j.kill()
    for i, (j, (_, err)) in enumerate(zip(joins, results)):
        assert j.returncode == 1, err
        assert (f"error[MSH080]: process {i} of 2: the job is not what this process expects: processes have "
                "different device counts (process 0: 4, process 1: 2)") in err


def test_unreachable_coordinator_is_an_error_after_the_timeout() -> None:
    started = time.monotonic()
    proc = _join(process_id=1, port=_free_port(), timeout_s=2)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert time.monotonic() - started < 30
    assert re.search(r"error\[MSH080\]: process 1 of 2 cannot reach the coordinator at 127\.0\.0\.1:\d+ "
                     r"\(waited 2 s; last error: Connection refused\)", err), err


def test_a_job_whose_other_processes_never_join_ends_after_the_timeout() -> None:
    started = time.monotonic()
    proc = _join(process_id=0, port=_free_port(), timeout_s=2)  # process 1 is never started
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert time.monotonic() - started < 30
    assert re.search(r"error\[MSH080\]: process 0 of 2 reached the coordinator at 127\.0\.0\.1:\d+ but not all 2 "
                     r"processes joined within 2 s", err), err


def test_a_second_process_zero_finds_the_coordinator_port_taken() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        proc = _join(process_id=0, port=taken.getsockname()[1])
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    assert "process 0 cannot start the coordinator on port" in err
    assert "make sure exactly one process has id 0" in err


def test_launch_with_too_few_devices_for_the_mesh_names_the_fix() -> None:
    proc = _launch("-n", "2", "--devices-per-process", "2", "examples/hybrid.py", timeout=120)
    assert proc.returncode == 1
    assert ("cannot simulate 8 CPU devices here: this job's 2 processes have 4 in all (2 each)" in proc.stderr)
    assert "meshify launch -n 2 --devices-per-process 4" in proc.stderr
    assert re.search(r"^meshify launch: process \d of 2 \(pid \d+\) exited with status 1", proc.stderr, re.MULTILINE)


@pytest.mark.parametrize("kwargs, message", [
    ({"coordinator": "127.0.0.1:1234", "num_processes": 2, "process_id": 2},
     "process_id is 2 but the job has 2 processes (ids 0 to 1)"),
    ({"coordinator": "127.0.0.1:1234", "num_processes": 2, "process_id": -1}, "process_id is -1"),
    ({"coordinator": "127.0.0.1:1234", "num_processes": 0, "process_id": 0}, "num_processes is 0"),
    ({"coordinator": "localhost", "num_processes": 2, "process_id": 0}, "coordinator 'localhost' is not host:port"),
    ({"coordinator": "127.0.0.1:1234", "num_processes": 2, "process_id": 0, "cpu_devices": 0}, "cpu_devices is 0"),
])
def test_initialize_rejects_impossible_settings_before_connecting(kwargs, message) -> None:
    with pytest.raises(StartupError, match=re.escape(message)):
        mr.initialize(**kwargs)
    assert not jax.distributed.is_initialized()


def test_initialize_reads_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("JAX_COORDINATOR_ADDRESS", "127.0.0.1:1234")
    monkeypatch.setenv("JAX_NUM_PROCESSES", "2")
    monkeypatch.setenv("JAX_PROCESS_ID", "5")
    with pytest.raises(StartupError, match=re.escape("process_id is 5 but the job has 2 processes")):
        mr.initialize()
    monkeypatch.setenv("JAX_PROCESS_ID", "one")
    with pytest.raises(StartupError, match=re.escape("JAX_PROCESS_ID='one' is not an integer")):
        mr.initialize()


@pytest.mark.parametrize("args, message", [
    (["-n", "0", "examples/hybrid.py"], "-n must be at least 1, not 0"),
    (["--devices-per-process", "0", "examples/hybrid.py"], "--devices-per-process must be at least 1, not 0"),
    (["no_such_script.py"], "no_such_script.py: no such file"),
])
def test_launch_rejects_bad_arguments(args, message) -> None:
    result = CliRunner().invoke(app, ["launch", *args])
    assert result.exit_code == 2
    assert message in result.output


# -- host data in and out, on one process -------------------------------------------------------


def _sharding(spec: mr.P) -> jax.sharding.NamedSharding:
    return jax.sharding.NamedSharding(mr.build_mesh(mr.MeshSpec.of(batch=2, model=4)), spec)


def test_from_host_and_to_host_round_trip_on_one_process() -> None:
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    s = _sharding(mr.P("batch", "model"))
    for placed in (mr.from_host(x, s), mr.from_host(mr.process_local(x), s), mr.from_host(mr.from_host(x, s), s)):
        assert placed.sharding == s
        np.testing.assert_array_equal(mr.to_host(placed), x)
    assert mr.process_slice(x.shape, s) == (slice(0, 8), slice(0, 8))  # one process holds everything
    tree = mr.to_host({"a": mr.from_host(x, s), "b": [1.0]})
    assert isinstance(tree["a"], np.ndarray) and tree["b"] == [np.asarray(1.0)]


def test_process_local_arguments_inside_jit_are_an_error() -> None:
    spec = mr.ArgSpec(("batch",), mr.P("batch"))
    f = mr.bind(lambda v, w: v * w, mr.MeshSpec.of(batch=2, model=4), {"v": spec, "w": spec}, mr.P("batch"))
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(mr.to_host(f(mr.process_local(x), x)), x * x)
    with pytest.raises(CallError, match="argument 'v' is process_local, which only a direct call can place"):
        jax.jit(lambda w: f(mr.process_local(x), w))(x)
