"""Host data in, host data out: global arrays from numpy on one process or many.

In a multi-process job every process runs the same program, and a global array is
assembled from what each process holds.  Host data can arrive two ways, both supported:

- the same full array on every process (the default): each process copies only the
  blocks its own devices hold; nothing crosses between processes;
- each process's own block, wrapped in :func:`process_local` (what a per-host data
  loader produces): the blocks are joined into one global array.

:func:`to_host` brings a global array back as numpy, whole, on every process.  On one
process all of this reduces to ``jax.device_put`` and ``numpy.asarray``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Sharding

from meshify.errors import CallError

__all__ = ["ProcessLocal", "process_local", "from_host", "to_host", "process_slice"]


@dataclass(frozen=True, slots=True)
class ProcessLocal:
    """This process's block of a global array: the part its devices hold in the target sharding.

    Attributes:
        data: the block (numpy or a local jax array).
        global_shape: the whole array's shape; inferred from the sharding when None.
    """

    data: Any
    global_shape: tuple[int, ...] | None = None


def process_local(data: Any, global_shape: Sequence[int] | None = None) -> ProcessLocal:
    """Marks ``data`` as this process's block of a global array, not the whole array.

    Pass the result wherever meshify takes a global array (a ``@mesh`` function's
    argument, ``Sharded.place``, :func:`from_host`).  For an argument split over the batch
    on a mesh whose batch axis spans the processes, each process passes its own rows;
    :func:`process_slice` says which.  On a single process the block is the whole array.

    Args:
        data: the rows (in general, the block) this process holds.
        global_shape: the whole array's shape, if it cannot be inferred (uneven blocks).
    """
    return ProcessLocal(data, tuple(global_shape) if global_shape is not None else None)


def from_host(value: Any, sharding: Sharding) -> jax.Array:
    """A global ``jax.Array`` in ``sharding`` from host data, on one process or many.

    Args:
        value: the whole array, the same on every process (numpy, a Python scalar, a
            process-local ``jax.Array``); or a :func:`process_local` block; or a global
            ``jax.Array`` (resharded if its sharding differs).
        sharding: the target, e.g. ``f.sharded.shardings["x"]``.
    """
    if isinstance(value, ProcessLocal):
        return jax.make_array_from_process_local_data(sharding, value.data, value.global_shape)
    if isinstance(value, jax.Array) and not value.is_fully_addressable:
        return value if value.sharding == sharding else jax.device_put(value, sharding)
    if sharding.is_fully_addressable:
        return jax.device_put(value, sharding)
    # The same full array on every process: each copies the blocks of its own devices.
    # (jax.device_put would first all-gather the array to check that the copies agree.)
    host = np.asarray(value)
    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])


def to_host(tree: Any) -> Any:
    """The full value of every array in ``tree`` as numpy, on every process.

    An array split across processes is gathered (a collective: every process must call
    ``to_host`` on the same arrays in the same order); a replicated or process-local one
    is copied from this process's devices.
    """
    return jax.tree.map(_to_host, tree)


def _to_host(x: Any) -> np.ndarray:
    if not isinstance(x, jax.Array) or x.is_fully_addressable or x.is_fully_replicated:
        return np.asarray(x)
    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def process_slice(shape: Sequence[int], sharding: Sharding) -> tuple[slice, ...]:
    """Which block of a global array of ``shape`` this process's devices hold in ``sharding``.

    ``full[process_slice(full.shape, s)]`` is what to wrap in :func:`process_local`; a data
    loader can use it to read only its own rows.

    Raises:
        CallError: the process's devices hold a block that is not one contiguous box.
    """
    shape = tuple(shape)
    indices = list(sharding.addressable_devices_indices_map(shape).values())
    box = []
    for dim, size in enumerate(shape):
        spans = sorted({_span(index[dim], size) for index in indices})
        stops = [stop for _, stop in spans[:-1]]
        if any(start != stop for (start, _), stop in zip(spans[1:], stops)):
            raise CallError(f"process {jax.process_index()} holds blocks {spans} of dim {dim} (size {size}) in "
                            f"{sharding}, which are not one contiguous range",
                            fix="order the mesh's devices so that each process holds one block, or place the "
                                "full array on every process instead") from None
        box.append(slice(spans[0][0], spans[-1][1]))
    return tuple(box)


def _span(index: slice, size: int) -> tuple[int, int]:
    start, stop, _ = index.indices(size)
    return start, stop
