"""Meshes on the available devices: CPU, GPU or TPU, picked automatically, overridable.

The mesh's axes are ``AxisType.Auto``: inputs arriving in another sharding are
resharded by XLA on entry to ``shard_map`` (see JAX_NOTES.md), while meshify places
host inputs in their final sharding itself, so that nothing moves twice.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import jax
import numpy as np
from jax.sharding import AxisType, Mesh

from meshify.annotate._types import MeshSpec
from meshify.errors import CallError

__all__ = ["build_mesh", "simulate_cpu_devices", "set_devices", "available_devices"]

_override: list[jax.Device] | None = None


def simulate_cpu_devices(count: int) -> None:
    """Makes the CPU backend expose ``count`` simulated devices.

    Call it before the first JAX operation (or set
    ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` before importing jax).  In a
    multi-process job (``meshify launch``, :func:`meshify.runtime.initialize`) each
    process's count was fixed at start-up; then this only checks that the job has
    ``count`` devices in all.
    """
    if jax.distributed.is_initialized():  # one of several processes: its count was set at start-up
        _check_job_devices(count)
        return
    if jax.config.jax_num_cpu_devices == count:
        return
    try:
        jax.config.update("jax_num_cpu_devices", count)
    except RuntimeError:
        have = len(jax.devices("cpu"))
        if have >= count:
            return
        raise CallError(
            f"cannot simulate {count} CPU devices: JAX has already started with {have}",
            fix=f"call meshify.runtime.simulate_cpu_devices({count}) right after `import jax`, "
                f"before any JAX operation, or set XLA_FLAGS=--xla_force_host_platform_device_count={count} "
                "before starting Python") from None


def set_devices(devices: Sequence[jax.Device] | str | None) -> None:
    """Overrides the devices meshes are built on: a list, a platform name ("cpu"), or None (auto)."""
    global _override
    if isinstance(devices, str):
        devices = jax.devices(devices)
    _override = list(devices) if devices is not None else None


def available_devices() -> list[jax.Device]:
    """The devices meshes use: the override, else ``$MESHIFY_PLATFORM``, else JAX's default backend."""
    if _override is not None:
        return _override
    platform = os.environ.get("MESHIFY_PLATFORM")
    return list(jax.devices(platform) if platform else jax.devices())


def build_mesh(spec: MeshSpec, devices: Sequence[jax.Device] | None = None) -> Mesh:
    """A ``jax.sharding.Mesh`` of ``spec``'s shape over the first ``spec.devices`` devices.

    When the devices belong to several processes, the mesh takes the same number from
    each (every process runs every program), in process order.
    """
    devices = list(devices) if devices is not None else available_devices()
    if len({d.process_index for d in devices}) > 1:
        devices = _spread_over_processes(spec, devices)
    if len(devices) < spec.devices:
        platform = devices[0].platform if devices else "?"
        raise CallError(
            f"mesh {spec} needs {spec.devices} devices but {len(devices)} {platform} "
            f"device{'s are' if len(devices) != 1 else ' is'} available",
            fix=f"to simulate {spec.devices} CPU devices, set "
                f"XLA_FLAGS=--xla_force_host_platform_device_count={spec.devices} before importing jax "
                f"(or call meshify.runtime.simulate_cpu_devices({spec.devices}) first thing), "
                "or shrink the mesh") from None
    types = (AxisType.Auto,) * len(spec.names)
    if len(devices) == spec.devices:
        return jax.make_mesh(spec.sizes, spec.names, axis_types=types, devices=devices)
    grid = np.array(devices[: spec.devices], dtype=object).reshape(spec.sizes)
    return Mesh(grid, spec.names, axis_types=types)


def _spread_over_processes(spec: MeshSpec, devices: list[jax.Device]) -> list[jax.Device]:
    """``spec.devices`` devices, an equal share from each process, grouped by process."""
    by_process: dict[int, list[jax.Device]] = {}
    for d in devices:
        by_process.setdefault(d.process_index, []).append(d)
    processes, available = len(by_process), min(len(group) for group in by_process.values())
    share, rest = divmod(spec.devices, processes)
    if rest == 0 and share <= available:
        return [d for p in sorted(by_process) for d in by_process[p][:share]]
    platform = devices[0].platform
    raise CallError(
        f"mesh {spec} needs {spec.devices} devices, {'an equal share from' if rest == 0 else 'a multiple of'} each of "
        f"the {processes} processes, but the processes have {available} {platform} devices each "
        f"({len(devices)} in all)",
        fix=f"start each process with {-(-spec.devices // processes)} devices (meshify launch -n {processes} "
            f"--devices-per-process {-(-spec.devices // processes)}), or use a mesh of a multiple of {processes} "
            f"devices, at most {processes * available}") from None


def _check_job_devices(count: int) -> None:
    have, processes = len(jax.devices()), jax.process_count()
    if have < count:
        raise CallError(
            f"cannot simulate {count} CPU devices here: this job's {processes} processes have {have} in all "
            f"({len(jax.local_devices())} each)",
            fix=f"start each process with {-(-count // processes)} devices (meshify launch -n {processes} "
                f"--devices-per-process {-(-count // processes)})") from None
