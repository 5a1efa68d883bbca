"""``bind()``/``sharded``: a per-device function + specs -> a global, JAX-traceable callable.

The callable takes global arrays (numpy or jax), checks them against the mesh, places
host inputs directly in their final sharding, and runs ``jax.shard_map`` under
``jax.jit``.  Inside someone else's trace (``jax.jit``, ``jax.grad``) it calls the
``shard_map`` directly so that the outer transformation sees through it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jax
from jax.sharding import NamedSharding, PartitionSpec

from meshify.annotate._types import MeshSpec
from meshify.errors import CallError
from meshify.runtime._devices import build_mesh

__all__ = ["ArgSpec", "Sharded", "bind", "sharded"]


@dataclass(frozen=True, slots=True)
class ArgSpec:
    """One array argument: its named dims and how the mesh splits them."""

    dims: tuple[str, ...]
    spec: PartitionSpec

    def axes(self, i: int) -> tuple[str, ...]:
        entry = self.spec[i] if i < len(self.spec) else None
        if entry is None:
            return ()
        return (entry,) if isinstance(entry, str) else tuple(entry)


class Sharded:
    """A sharded program: call it with global arrays, get global (sharded) arrays back.

    Attributes:
        local: the per-device function (what runs inside ``shard_map``).
        mesh_spec: the mesh's axis names and sizes.
        args: array parameters by name; every other parameter is a static Python value.
        out_specs: a PartitionSpec, or a tuple of them for a tuple return.
    """

    def __init__(self, local: Callable[..., Any], mesh_spec: MeshSpec, args: Mapping[str, ArgSpec],
                 out_specs: Any, *, devices: Sequence[jax.Device] | None = None) -> None:
        self.local = local
        self.mesh_spec = mesh_spec
        self.args = dict(args)
        self.out_specs = out_specs
        self._devices = devices
        self._signature = inspect.signature(local)
        self._mesh: jax.sharding.Mesh | None = None
        self._programs: dict[Any, tuple[Callable, Callable]] = {}
        functools.update_wrapper(self, local)

    @property
    def mesh(self) -> jax.sharding.Mesh:
        """The device mesh, built on first use over the available devices."""
        if self._mesh is None:
            self._mesh = build_mesh(self.mesh_spec, self._devices)
        return self._mesh

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise CallError(f"{self.__name__}(): {e}") from None
        bound.apply_defaults()
        arrays = [bound.arguments[name] for name in self.args]
        statics = tuple((n, v) for n, v in bound.arguments.items() if n not in self.args)
        self._check(arrays)
        mesh = self.mesh
        mapped, jitted = self._program(statics)
        if any(isinstance(a, jax.core.Tracer) for a in jax.tree.leaves(arrays)):
            return mapped(*arrays)
        placed = [jax.device_put(a, NamedSharding(mesh, s.spec)) for a, s in zip(arrays, self.args.values())]
        return jitted(*placed)

    def _program(self, statics: tuple[tuple[str, Any], ...]) -> tuple[Callable, Callable]:
        """The shard_map (and its jit) for these static values, cached when they are hashable."""
        try:
            hash(statics)
        except TypeError:  # unhashable static values (a dict config): build afresh each call
            return self._build_program(statics)
        if statics not in self._programs:
            self._programs[statics] = self._build_program(statics)
        return self._programs[statics]

    def _build_program(self, statics: tuple[tuple[str, Any], ...]) -> tuple[Callable, Callable]:
        names = list(self.args)
        static_kwargs = dict(statics)

        def local(*arrays: Any) -> Any:
            return self.local(**dict(zip(names, arrays)), **static_kwargs)

        mapped = jax.shard_map(local, mesh=self.mesh, in_specs=tuple(s.spec for s in self.args.values()),
                               out_specs=self.out_specs, check_vma=True)
        return mapped, jax.jit(mapped)

    @property
    def shardings(self) -> dict[str, NamedSharding]:
        """Each array argument's sharding on the mesh, by parameter name."""
        return {name: NamedSharding(self.mesh, spec.spec) for name, spec in self.args.items()}

    def place(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """The arguments, with each array put on the mesh in its sharding (statics as given).

        Place parameters once before a training loop so that every step, its gradients and
        the optimizer state keep these shardings instead of moving data each call.
        """
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise CallError(f"{self.__name__}.place(): {e}") from None
        bound.apply_defaults()
        self._check([bound.arguments[name] for name in self.args])
        shardings = self.shardings
        return tuple(jax.device_put(value, shardings[name]) if name in shardings else value
                     for name, value in bound.arguments.items())

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """``jax.jit(...).lower`` of the program for these arguments (for HLO inspection)."""
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        arrays = [bound.arguments[name] for name in self.args]
        statics = tuple((n, v) for n, v in bound.arguments.items() if n not in self.args)
        self._check(arrays)
        _, jitted = self._program(statics)
        placed = [jax.device_put(a, NamedSharding(self.mesh, s.spec)) for a, s in zip(arrays, self.args.values())]
        return jitted.lower(*placed)

    def _check(self, arrays: Sequence[Any]) -> None:
        """Collects every rank, size and divisibility problem, then raises one CallError."""
        problems: list[str] = []
        sizes: dict[str, tuple[int, str]] = {}
        for (name, spec), value in zip(self.args.items(), arrays):
            shape = getattr(value, "shape", None)
            if shape is None:
                problems.append(f"argument {name!r} is {type(value).__name__}, not an array with dims "
                                f"{list(spec.dims)}")
                continue
            if len(shape) != len(spec.dims):
                problems.append(f"argument {name!r} has shape {tuple(shape)} (rank {len(shape)}) but its hint "
                                f"names {len(spec.dims)} dims {list(spec.dims)}")
                continue
            for i, (dim, size) in enumerate(zip(spec.dims, shape)):
                if dim in sizes and sizes[dim][0] != size:
                    problems.append(f"dim {dim!r} is {size} in argument {name!r} but {sizes[dim][0]} in "
                                    f"argument {sizes[dim][1]!r}")
                sizes.setdefault(dim, (size, name))
                axes = spec.axes(i)
                shards = self.mesh_spec.size(axes)
                if size % shards:
                    problems.append(f"argument {name!r}: dim {dim!r} has size {size}, which mesh axis "
                                    f"{'x'.join(repr(a) for a in axes)} ({shards} shards) does not divide")
        if problems:
            raise CallError(
                f"{self.__name__}() on mesh {self.mesh_spec}: "
                + ("; ".join(problems) if len(problems) == 1 else "\n  - " + "\n  - ".join(problems)),
                fix="pass arrays whose split dims are multiples of their mesh axes' sizes, "
                    "or change the mesh or the layout rules")


def bind(local: Callable[..., Any], mesh: MeshSpec, args: Mapping[str, ArgSpec], out_specs: Any,
         *, devices: Sequence[jax.Device] | None = None) -> Sharded:
    """Wraps a per-device function as a global sharded callable (see :class:`Sharded`)."""
    return Sharded(local, mesh, args, out_specs, devices=devices)


def sharded(mesh: MeshSpec, args: Mapping[str, ArgSpec], out_specs: Any) -> Callable[[Callable], Sharded]:
    """Decorator form of :func:`bind`, used by generated code."""
    return lambda local: bind(local, mesh, args, out_specs)
