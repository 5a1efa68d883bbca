"""``bind()``/``sharded``: a per-device function + specs -> a global, JAX-traceable callable.

The callable takes global arrays (numpy or jax), checks them against the mesh, places
host inputs directly in their final sharding, and runs ``jax.shard_map`` under
``jax.jit``.  Inside someone else's trace (``jax.jit``, ``jax.grad``) it calls the
``shard_map`` directly so that the outer transformation sees through it.  On a mesh
spanning several processes every process makes the same call: host inputs are either the
same full array everywhere or, wrapped in ``process_local``, each process's own block
(see ``_placement.py``).
"""

from __future__ import annotations

import contextvars
import dataclasses
import functools
import inspect
import os
import re
import sys
import types
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

from meshify._bound import BoundMethod
from meshify._literals import same_literal
from meshify.annotate._types import MeshSpec
from meshify.errors import CallError
from meshify.runtime._devices import build_mesh
from meshify.runtime._placement import ProcessLocal, from_host
from meshify.runtime._source import call_site_span, statement_span

#: The global size of each hinted dim of the call being traced (see :meth:`Sharded._traced`).
CALL_SIZES: contextvars.ContextVar[Mapping[str, int] | None] = contextvars.ContextVar("meshify_call_sizes",
                                                                                     default=None)

__all__ = ["ArgSpec", "TreeSpec", "Sharded", "bind", "sharded"]


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


@dataclass(frozen=True, slots=True)
class TreeSpec:
    """A pytree argument (NamedTuple, dataclass or dict): each field's ArgSpec or TreeSpec.

    Kind ``"sequence"`` (``blocks: tuple[Block, ...]``) has one field, ``"*"``, every item's spec;
    its length is each call's: :meth:`concrete` spells the items of one argument out.
    """

    cls: type
    kind: str  # "namedtuple", "dataclass", "dict", "tuple" or "sequence"
    #: Each field's spec; None for an optional field that this version of the program takes as None.
    fields: Mapping[str, ArgSpec | TreeSpec | None]
    #: The fields hinted ``X | None``: which are None picks the version of the program (``Sharded._version``).
    optional: tuple[str, ...] = ()
    #: Static fields of a dataclass (``register_dataclass(meta_fields=[...])``, ``field(metadata={"static":
    #: True})``): no arrays, part of the pytree's structure; each call's values key the program (:meth:`concrete`).
    meta: tuple[str, ...] = ()
    #: The values of ``meta`` for one call (a spec :meth:`concrete` made), None in the abstract spec.
    meta_values: tuple[tuple[str, Any], ...] | None = None

    @property
    def has_sequence(self) -> bool:
        """Whether each call's value shapes the spec: a sequence of any length, or static fields' values."""
        return self.kind == "sequence" or bool(self.meta) and self.meta_values is None or any(
            isinstance(s, TreeSpec) and s.has_sequence for s in self.fields.values())

    def meta_key(self, path: str) -> list[tuple[str, Any]]:
        """``("path.field", value)`` of each static field's value in this concrete spec, nested ones too."""
        out = [(f"{path}.{k}", _key(v)) for k, v in self.meta_values or ()]
        for name, spec in self.fields.items():
            out += spec.meta_key(f"{path}.{name}") if isinstance(spec, TreeSpec) else []
        return out

    def nones(self, value: Any, path: str) -> dict[str, bool]:
        """``"Class.field"`` -> whether it is None, for each optional field of ``value`` (nested ones too)."""
        out: dict[str, bool] = {}
        if self.kind == "sequence":  # (the items of a sequence have no optional fields: refused at their hint)
            return out
        for name, spec in self.fields.items():
            field = self._field(value, name, path)
            found = [(f"{self.cls.__name__}.{name}", field is None)] if name in self.optional else []
            if isinstance(spec, TreeSpec) and field is not None:
                found += spec.nones(field, f"{path}.{name}").items()
            for group, none in found:
                if out.setdefault(group, none) != none:
                    raise mixed_nones(group, f"argument {path!r}")
        return out

    def concrete(self, value: Any, path: str) -> TreeSpec:
        """This spec for ``value``: each sequence a tuple (or list) of as many item specs as it has items."""
        if self.kind == "sequence":
            if not isinstance(value, tuple | list) or hasattr(value, "_fields"):
                raise CallError(f"argument {path!r} should be a tuple or list, got {type(value).__name__}",
                                fix="pass a tuple of the items, e.g. (block1, block2)")
            item = self.fields["*"]
            return TreeSpec(type(value), "tuple", {
                str(i): item.concrete(v, f"{path}.{i}") if isinstance(item, TreeSpec) else item
                for i, v in enumerate(value)})
        if not self.has_sequence:
            return self
        meta = tuple((name, self._field(value, name, path)) for name in self.meta) if self.meta else None
        return TreeSpec(self.cls, self.kind, {
            name: spec.concrete(self._field(value, name, path), f"{path}.{name}") if isinstance(spec, TreeSpec)
            else spec for name, spec in self.fields.items()}, self.optional, self.meta, meta)

    def leaves(self, path: str) -> list[tuple[str, ArgSpec]]:
        out = []
        for name, spec in self.fields.items():
            leaf = f"{path}.{name}"
            out += spec.leaves(leaf) if isinstance(spec, TreeSpec) else [] if spec is None else [(leaf, spec)]
        return out

    def _field(self, value: Any, name: str, path: str) -> Any:
        try:
            if self.kind == "tuple" and len(value) != len(self.fields):
                raise TypeError
            return value[name] if self.kind == "dict" else value[int(name)] if self.kind == "tuple" \
                else getattr(value, name)
        except (KeyError, AttributeError, TypeError, IndexError):
            if self.kind == "tuple":
                raise CallError(f"argument {path!r} should be a tuple of {len(self.fields)} arrays, got "
                                f"{type(value).__name__}", fix=f"pass {len(self.fields)} arrays") from None
            if self.kind == "dict" and isinstance(value, Mapping):
                raise CallError(f"argument {path!r} has no key {name!r}, which its hint {self.cls.__name__} declares",
                                fix=f"pass a dict with every key {self.cls.__name__} declares "
                                    f"({', '.join(map(repr, self.fields))})") from None
            raise CallError(f"argument {path!r} should be a {self.cls.__name__} with field {name!r}, "
                            f"got {type(value).__name__}",
                            fix=f"pass a {self.cls.__name__}(...)") from None

    def flatten(self, value: Any, path: str) -> list[Any]:
        if self.kind == "dict" and isinstance(value, Mapping):
            self._no_extra_keys(value, path)
        out = []
        for name, spec in self.fields.items():
            field = self._field(value, name, path)
            if (spec is None) != (field is None):  # (the version is picked by which optional fields are None)
                raise CallError(f"argument '{path}.{name}' is {'None' if field is None else 'an array'}, where this "
                                f"version of the program takes {'an array' if field is None else 'None'}",
                                fix=f"hint it as optional ({name}: Tensor[...] | None) in {self.cls.__name__}"
                                if field is None else "pass None")
            out += spec.flatten(field, f"{path}.{name}") if isinstance(spec, TreeSpec) else [] if spec is None \
                else [field]
        return out

    def _no_extra_keys(self, value: Mapping, path: str) -> None:
        """A dict argument holds the hint's keys and no others: the function runs on the hint's fields only,
        so a key the hint does not declare would silently drop out of what ``jax.tree.map`` returns."""
        extra = [key for key in value if key not in self.fields]
        if extra:
            raise CallError(f"argument {path!r} has key {extra[0]!r}, which its hint {self.cls.__name__} does not "
                            f"declare (it declares {', '.join(map(repr, self.fields))}): the sharded function would "
                            "run without it", fix=f"declare {extra[0]!r} with its dims in {self.cls.__name__}, or "
                                                  "leave it out of the dict you pass")

    def unflatten(self, leaves: Iterator[Any]) -> Any:
        if self.kind == "sequence":
            raise CallError(f"the arrays of a {self.cls.__name__} of any length depend on each call's items",
                            fix="ask for them with the arguments: fn.place(...) puts each array in its sharding")
        values = {name: spec.unflatten(leaves) if isinstance(spec, TreeSpec) else None if spec is None
                  else next(leaves) for name, spec in self.fields.items()}
        if self.kind == "tuple":
            return self.cls(values.values())  # a tuple, or a list where a list[Block] argument was one
        if self.meta_values:  # (static fields: this call's values, as the pytree's structure holds them)
            values.update(self.meta_values)
        return dict(values) if self.kind == "dict" else self.cls(**values)


def _is_typed_key(value: Any) -> bool:
    """Whether ``value`` is a typed PRNG key array (``jax.random.key``'s)."""
    dtype = getattr(value, "dtype", None)
    try:
        return dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)
    except TypeError:
        return False


def mixed_nones(group: str, where: str) -> CallError:
    """The error for an optional field (``"Linear.b"``) None in some places of a call and an array in others."""
    return CallError(f"{group} is None in some places of {where} and an array in others: meshify rewrote the "
                     f"function once with every {group} None and once with none",
                     fix="pass an array for every one (one that does nothing where there is none: zeros for a bias), "
                         "or None for every one")


def _none_fields(args: Mapping[str, ArgSpec | TreeSpec]) -> frozenset[str]:
    """``"Class.field"`` of the optional fields that these specs take as None."""
    out: set[str] = set()
    for spec in args.values():
        if isinstance(spec, TreeSpec):
            out |= {f"{spec.cls.__name__}.{n}" for n in spec.optional if spec.fields.get(n) is None}
            out |= _none_fields({n: s for n, s in spec.fields.items() if s is not None})
    return frozenset(out)


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _user_stacklevel() -> int:
    """The ``warnings.warn`` stacklevel of the first caller outside meshify (from its caller)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE + os.sep):
        frame, level = frame.f_back, level + 1
    return level


class Sharded:
    """A sharded program: call it with global arrays, get global (sharded) arrays back.

    Attributes:
        local: the per-device function (what runs inside ``shard_map``).
        mesh_spec: the mesh's axis names and sizes.
        args: array parameters by name; every other parameter is a static Python value.
        out_specs: a PartitionSpec, or a tuple (dict, NamedTuple) of them for several results; or a
            function of static parameters returning those, for results chosen by them
            (``lambda return_hidden: (P("batch"), P("batch", None)) if return_hidden else P("batch")``).
        origin: the function call-time errors point at (the user's own for ``@mesh``).
    """

    def __init__(self, local: Callable[..., Any], mesh_spec: MeshSpec, args: Mapping[str, ArgSpec],
                 out_specs: Any, *, devices: Sequence[jax.Device] | None = None,
                 reads: Mapping[str, Mapping[str, tuple[str, ...] | None]] | None = None,
                 globals_read: Sequence[str] = (), constants: Mapping[str, Any] | None = None,
                 arrays_read: Mapping[str, int | None] | Sequence[str] = (),
                 flags: Mapping[str, bool] | None = None, fallbacks: Mapping[str, str] | None = None,
                 aliases: Mapping[str, str] | None = None) -> None:
        self.local = local
        #: Module variables the body reads (``SCALE``): the program is keyed on their current values,
        #: so a call after one is rebound traces again (``.reference`` reads the current value too).
        self.globals_read = tuple(globals_read)
        #: The module constants among them (``AXIS = 1``) and the values the rewrite took for them: an
        #: axis, a shape or an ``if`` may follow from one, so a call after one is rebound from outside
        #: (``mod.AXIS = 0``) is an error here (``@mesh`` rewrites the function again instead).
        self.constants = dict(constants or {})
        #: Those among them that may hold arrays (``TABLE: Tensor["n"] = ...``): keyed on identity, and never
        #: taken for Python scalars (a rebound one is read by the next call's trace).
        self.arrays_read = dict(arrays_read) if isinstance(arrays_read, Mapping) else dict.fromkeys(arrays_read)
        #: Module aliases of other modules' functions the rewrite called by their rules (``dot = jnp.dot``) ->
        #: the function's qualified name: one rebound from outside since is an error at the call (``@mesh``
        #: rewrites the function again instead, reading the name as the value it holds).
        self.aliases = dict(aliases or {})
        #: Static flags -> the value this version was rewritten for (``if output_attentions:`` chose other
        #: results): a call passing another value runs the version for it (``variant``), or is refused.
        self.flags = dict(flags or {})
        #: A flag defaulting to None -> ``"config.attr"``: a call passing None runs the version for that value
        #: (as the function's ``p = p if p is not None else config.attr`` resolves it).
        self.fallbacks = dict(fallbacks or {})
        #: Static parameter -> attribute the body reads off it (``self.w``) -> the dims a hint pins it to,
        #: or None (then it must not be an array of rank > 0).  Arrays there are inputs of every call.
        self.reads = {name: dict(attrs) for name, attrs in (reads or {}).items()}
        self.mesh_spec = mesh_spec
        self.args = dict(args)
        self.leaf_specs: dict[str, ArgSpec] = dict(
            leaf for name, spec in self.args.items()
            for leaf in (spec.leaves(name) if isinstance(spec, TreeSpec) else [(name, spec)]))
        self.out_specs = out_specs
        self._devices = devices
        #: The versions of the function for some optional arrays being None, by those parameters, and for
        #: other values of its static flags, by those values (``variant``).
        self._variants: dict[Any, Sharded] = {}
        self.origin = local
        self._signature = inspect.signature(local)
        self._mesh: jax.sharding.Mesh | None = None
        self._programs: dict[Any, tuple[Callable, Callable]] = {}
        self._warned_unhashable = False
        #: Whether an argument holds a sequence of any length; then a program per lengths, keyed by leaf paths.
        self._sequences = any(isinstance(spec, TreeSpec) and spec.has_sequence for spec in self.args.values())
        #: The programs for the lengths of the call's sequences, by their leaves' paths (``_for_lengths``).
        self._lengths: dict[tuple[str, ...], Sharded] = {}
        functools.update_wrapper(self, local)
        # jax.jit(program) copies the instance's __dict__ onto its wrapper: ``.reference`` there too.
        self.__dict__["reference"] = _Reference(self)

    @property
    def origin(self) -> Callable[..., Any]:
        """The function call-time errors point at (the user's own for ``@mesh``; its versions share it)."""
        return self._origin

    @origin.setter
    def origin(self, fn: Callable[..., Any]) -> None:
        self._origin = fn
        for version in [*self._variants.values(), *getattr(self, "_lengths", {}).values()]:
            version.origin = fn

    def defaults_from(self, fn: Callable[..., Any]) -> None:
        """The default values of ``fn``'s parameters (the user's function, whose defaults Python evaluated when
        its ``def`` ran) for this program's and its versions': the rewritten ``def`` runs later (on the first
        call, or again after a module constant is rebound), and ``x0=G0`` evaluated then would read a ``G0``
        rebound since, where the user's function keeps the array it was defined with."""
        own = inspect.signature(fn).parameters
        for version in [self, *self._variants.values(), *getattr(self, "_lengths", {}).values()]:
            local = version.local
            if not hasattr(local, "__defaults__") or list(inspect.signature(local).parameters) != list(own):
                continue
            local.__defaults__ = fn.__defaults__
            local.__kwdefaults__ = fn.__kwdefaults__
            version._signature = inspect.signature(local)

    def variant(self, version: Sharded) -> Sharded:
        """Registers ``version``, the same function rewritten for some optional arrays being None (the
        array parameters it lacks), and returns ``self``: generated code writes ``@f.variant`` above it.

        A call then runs the version for the arguments that are None: whether ``if bias is None:`` is
        taken is decided per call, as on one device, and each version is a program of its own."""
        version.origin = self.origin
        nones = frozenset(self.args) - frozenset(version.args) | _none_fields(version.args) - _none_fields(self.args)
        if set(version.args) - set(self.args):
            raise TypeError(f"{version.__name__}: a variant takes a subset of {self.__name__}'s array parameters")
        if version.flags or self.flags:  # other values of static flags (and perhaps some optional arrays None)
            if set(version.flags) != set(self.flags):
                raise TypeError(f"{version.__name__}: a variant for static flags names {self.__name__}'s flags")
            self._variants[(nones, tuple(sorted(version.flags.items())))] = version
            return self
        if not nones:
            raise TypeError(f"{version.__name__}: a variant takes a subset of {self.__name__}'s array parameters")
        self._variants[nones] = version
        return self

    def _version(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Sharded:
        """The version of the program for which of the optional arrays are None (``self`` if none is)."""
        if not self._variants and not self.flags:
            return self
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError:
            return self  # the call's own checks say what is wrong
        bound.apply_defaults()
        if self.flags:
            given = {name: bound.arguments.get(name) for name in self.flags}
            for name, path in self.fallbacks.items():  # None: the value the function reads off the config
                if given.get(name) is None:
                    owner, attr = path.split(".", 1)
                    given[name] = getattr(bound.arguments.get(owner), attr, None)
            wrong = next(((n, v) for n, v in given.items() if v is not True and v is not False), None)
            if wrong is not None:
                read = f" (read off {self.fallbacks[wrong[0]]}, as it was passed None)" \
                    if wrong[0] in self.fallbacks and bound.arguments.get(wrong[0]) is None else ""
                raise self._placed(CallError(
                    f"{self.__name__}(): {wrong[0]}={wrong[1]!r}{read}: meshify rewrote this function once per "
                    f"value of its static flags {', '.join(self.flags)} (their results differ), for True and False "
                    "only",
                    fix=f"pass {wrong[0]}=True or {wrong[0]}=False"), wrong[0])
            optional = frozenset().union(*(k[0] for k in self._variants))
            key = (self._call_nones(bound, optional), tuple(sorted(given.items())))
            return self if key == (frozenset(), tuple(sorted(self.flags.items()))) else self._variants[key]
        optional = frozenset().union(*self._variants)
        return self._variants.get(self._call_nones(bound, optional), self)

    def _call_nones(self, bound: inspect.BoundArguments, optional: frozenset[str]) -> frozenset[str]:
        """Which of the ``optional`` parameters (``bias``) and pytree fields (``"Linear.b"``) are None in
        this call: the key of its version of the program."""
        groups: dict[str, bool] = {}
        if any("." in n for n in optional):
            for name, spec in self.args.items():
                value = bound.arguments.get(name)
                if isinstance(spec, TreeSpec) and value is not None:
                    try:
                        for group, none in spec.nones(value, name).items():
                            if groups.setdefault(group, none) != none:
                                raise mixed_nones(group, f"the arguments ({name!r} and another)")
                    except CallError as e:
                        raise self._placed(e, name) from None
        return frozenset(n for n in optional if (groups.get(n, False) if "." in n else bound.arguments.get(n) is None))

    @property
    def reference(self) -> Callable[..., Any]:
        """The untouched single-device function: the ``@mesh`` function's own, or for a converted
        file's function the original's (imported from the file it was converted from)."""
        if self.origin is not self.local:
            return self.origin
        from meshify.runtime._reference import original_reference

        try:
            return original_reference(self.local)
        except CallError as e:
            raise self._placed(e) from None

    @property
    def mesh(self) -> jax.sharding.Mesh:
        """The device mesh, built on first use over the available devices."""
        if self._mesh is None:
            try:
                self._mesh = build_mesh(self.mesh_spec, self._devices)
            except CallError as e:
                raise self._placed(e) from None
        return self._mesh

    def _placed(self, error: CallError, param: str | None = None) -> CallError:
        """``error`` pointing at ``param``'s hint in the source (at the decorator if None), where known."""
        span = call_site_span(self.origin, param)
        return error.with_span(span) if span is not None else error  # type: ignore[return-value]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        version = self._version(args, kwargs)
        if version is not self:
            return version(*args, **kwargs)
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            missing = re.search(r"'(\w+)'", str(e))
            raise self._placed(CallError(f"{self.__name__}(): {e}", fix="pass one value per parameter"),
                               missing[1] if missing else next(iter(self._signature.parameters), None)) from None
        bound.apply_defaults()
        if self._sequences:
            return self._for_lengths(bound)(*args, **kwargs)
        arrays = self._flatten(bound)
        statics = tuple((n, v) for n, v in bound.arguments.items() if n not in self.args)
        names, extra = _split_reads(self._check_statics(statics))
        if any(isinstance(a, jax.core.Tracer) for a in jax.tree.leaves([arrays, extra])):
            self._check(arrays)
            return self._traced(lambda: self._program(statics, names)[1](*arrays, *extra), arrays)
        placed = self._place(arrays) + [from_host(v, NamedSharding(self.mesh, PartitionSpec())) for v in extra]
        return self._traced(lambda: self._program(statics, names)[1](*placed), arrays)

    def _traced(self, run: Callable[[], Any], arrays: Sequence[Any] = ()) -> Any:
        """``run()`` (which traces the program on first use); a ``CallError`` a runtime function raises
        while tracing (sizes it cannot split: a window, a pad, a slice) points at the user's statement.
        While it runs, :func:`~meshify.runtime.ops.entries` can read the dims' sizes of this call."""
        sizes = {dim: size for spec, value in zip(self.leaf_specs.values(), arrays)
                 for dim, size in zip(spec.dims, getattr(value, "shape", ()))}
        token = CALL_SIZES.set(sizes)
        try:
            return run()
        except CallError as e:
            if e.span is not None:
                raise
            raise self._at_statement(e, e) from None
        except TypeError as e:
            if str(e).startswith("cannot reshape array"):
                # x.reshape(-1, n_micro, d) of a split batch: each device reshapes its block, whose rows the new
                # leading dim (split as the batch was) cannot share out evenly
                raise self._at_statement(e, CallError(
                    f"{self.__name__}(): a reshape of a split dim failed on a device's block: "
                    f"{str(e).strip().splitlines()[0].strip()}", fix="make the split dim's new size (its size "
                    "divided by the other new dims') a multiple of the devices it is split over (a larger batch, "
                    "fewer micro-batches), or split it over fewer devices")) from None
            if "to='varying'" not in str(e) or "carry" not in str(e):
                raise
            # a loop inside code kept as written (a library function no rule models, on each device's rows):
            # its carry starts from a constant, which shard_map types as the same on every device, and comes
            # back per-device; JAX refuses that, and meshify cannot reach into the library's loop to say otherwise
            raise self._at_statement(e, CallError(
                f"{self.__name__}(): a loop inside code that runs on each device's block starts its carry from a "
                f"constant and returns per-device values, which jax.shard_map's check refuses: "
                f"{str(e).strip().splitlines()[0].strip()}",
                fix="call the function that runs the loop (a library loss such as optax.ctc_loss) outside the @mesh "
                    "function, on its inputs or outputs, or write the loop itself in the function, where meshify "
                    "types its carry")) from None
        except Exception as e:
            if type(e).__module__.split(".")[0] != "einops":
                raise
            # an einops call on a device's block: a length it infers for the first axis of a group split off
            # a split dim (b s (h d) with d=... given, h inferred) that the shards do not divide
            error = CallError(f"{self.__name__}(): einops failed on a device's block, which holds 1/n of each "
                              f"split dim: {str(e).strip().splitlines()[-1].strip()}",
                              fix="pass the length of the group's first axis by keyword (h=8), which meshify "
                                  "checks against the shards, or map the split dim to no mesh axis")
            raise self._at_statement(e, error) from None
        finally:
            CALL_SIZES.reset(token)

    def _at_statement(self, raised: BaseException, error: CallError) -> CallError:
        """``error`` (in place of ``raised``, an error JAX or a library raised while tracing) pointing at the
        user's statement that was running, where known."""
        span = statement_span(raised.__traceback__, self.local, self.origin)
        return error.with_span(span) if span is not None else error  # type: ignore[return-value]

    def _for_lengths(self, bound: inspect.BoundArguments) -> Sharded:
        """The program for the lengths of this call's sequences (``blocks: tuple[Block, ...]``), each item
        spelled out in its specs: built once per lengths, as a program is per static value."""
        try:
            args = {name: spec.concrete(bound.arguments[name], name) if isinstance(spec, TreeSpec) else spec
                    for name, spec in self.args.items()}
        except CallError as e:
            raise self._placed(e, next(iter(self.args), None)) from None
        key = tuple(path for name, spec in args.items()
                    for path, _ in (spec.leaves(name) if isinstance(spec, TreeSpec) else [(name, spec)])) + \
            tuple(item for name, spec in args.items() if isinstance(spec, TreeSpec) for item in spec.meta_key(name))
        if key not in self._lengths:
            variant = Sharded(self.local, self.mesh_spec, args, self.out_specs, devices=self._devices,
                              reads=self.reads, globals_read=self.globals_read, constants=self.constants,
                              arrays_read=self.arrays_read, aliases=self.aliases)
            variant.origin, variant._mesh = self.origin, self._mesh
            self._lengths[key] = variant
        return self._lengths[key]

    def _check_statics(self, statics: tuple[tuple[str, Any], ...]) -> list[tuple[str, str, Any]]:
        """A parameter without a Tensor hint is a static Python value: an array there (or inside a
        tuple, list or dict there) would be closed over whole on every device, which is wrong as
        soon as it meets a split one; it is refused, pointing at the parameter.

        Returns ``(param, attribute, value)`` for each attribute the body reads off a static argument
        (``self.w``, ``cfg.scale``): arrays are inputs of this call and other values part of the
        program's key, so a later ``self.w = ...`` or ``cfg.scale = ...`` is seen."""
        reads = []
        for name, value in statics:
            for attr, dims in self.reads.get(name, {}).items():
                read = getattr(value, attr, None)
                if not isinstance(read, jax.Array | np.ndarray):
                    if any(isinstance(leaf, jax.Array | np.ndarray) for leaf in jax.tree.leaves(read)):
                        raise self._placed(CallError(
                            f"{self.__name__}(): {name}.{attr} is a {type(read).__name__} holding arrays, read off "
                            f"static argument {name!r}", fix="pass its arrays as arguments with Tensor hints"),
                            name) from None
                    reads.append((name, attr, read))  # a Python value: part of the program's key
                    continue
                if dims is None and read.ndim:
                    raise self._placed(CallError(
                        f"{self.__name__}(): {name}.{attr} is an array of shape {tuple(read.shape)}, read off static "
                        f"argument {name!r} without a Tensor hint, so meshify cannot tell how it lines up with "
                        "split arrays", fix=f"name its dims where it is read: {attr}: Tensor[...] = {name}.{attr}"),
                        name) from None
                if dims is not None and read.ndim != len(dims):
                    raise self._placed(CallError(
                        f"{self.__name__}(): {name}.{attr} has shape {tuple(read.shape)} but its hint names "
                        f"{len(dims)} dims {list(dims)}", fix="fix the hint where it is read"), name) from None
                reads.append((name, attr, read))
            leaves = jax.tree.leaves(value)
            found = next((leaf for leaf in leaves if isinstance(leaf, jax.Array | np.ndarray)), None)
            if found is None:
                continue
            where = "" if found is value else f" (an array of shape {tuple(found.shape)} inside it)"
            traced = isinstance(found, jax.core.Tracer) and found is value and found.ndim == 0
            key = _is_typed_key(found) or (found is value and tuple(found.shape) == (2,)
                                            and str(found.dtype) == "uint32")
            optimizer = any(type(v).__module__.split(".")[0] == "optax"
                            for v in (value, *(value if isinstance(value, tuple | list) else ())))
            fix = ("an optax optimizer state: return the gradients and call opt.update and optax.apply_updates "
                   "outside the @mesh function (its arrays take the parameters' shardings there)") if optimizer else (
                   f"a scalar traced by jax.jit: make it static there (jax.jit(f, static_argnames=('{name}',))), "
                   f"or give it a hint, {name}: Tensor[()], to pass it as a replicated array") if traced else (
                   f"a random key: hint it {name}: Annotated[jax.Array, ()] (a typed key, jax.random.key) or "
                   f"{name}: Annotated[jax.Array, \"key_data\"] (the uint32[2] of jax.random.PRNGKey)") if key else (
                   f"name its dims: {name}: Tensor[...] (a tuple or dict of arrays: a NamedTuple or dataclass "
                   "with a Tensor hint per field), or pass a Python number")
            raise self._placed(CallError(
                f"{self.__name__}(): argument {name!r} is {type(value).__name__}{where} but has no Tensor hint, "
                "so meshify takes it as a static Python value", fix=fix), name) from None
        return reads

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        """On a class, ``obj.method`` passes ``obj`` as the first (static) argument."""
        return self if instance is None else BoundMethod(self, instance)

    def _flatten(self, bound: inspect.BoundArguments) -> list[Any]:
        """The array leaves of the arguments, in ``leaf_specs`` order (pytree arguments flattened)."""
        out = []
        for name, spec in self.args.items():
            value = bound.arguments[name]
            if isinstance(spec, ArgSpec) and not spec.dims and type(value) in (bool, int, float, complex):
                # a Python number for a Tensor[()] parameter (a generation loop's pos): the scalar array JAX
                # makes of it where the single-device code uses it, weakly typed as there
                value = jax.numpy.asarray(value)
            try:
                out += spec.flatten(value, name) if isinstance(spec, TreeSpec) else [value]
            except CallError as e:
                raise self._placed(e, name) from None
        return out

    def _unflatten(self, leaves: Sequence[Any]) -> dict[str, Any]:
        """The inverse of ``_flatten``: argument name -> array or pytree."""
        it = iter(leaves)
        return {name: spec.unflatten(it) if isinstance(spec, TreeSpec) else next(it) for name, spec in self.args.items()}

    def _program(self, statics: tuple[tuple[str, Any], ...],
                 reads: tuple[tuple, ...] = ()) -> tuple[Callable, Callable]:
        """The shard_map (and its jit) for these static values, cached when they are hashable;
        ``reads`` names the arrays read off statics that come in after the arguments' leaves."""
        current = self._current_globals()
        try:
            hash(statics)
        except TypeError:  # unhashable static values (a dict config): build afresh each call
            self._warn_unhashable(statics)
            return self._build_program(statics, reads)
        key = (statics, reads, current)
        if key not in self._programs:
            if not self._programs:
                self._warn_unused_axes()
            self._programs[key] = self._build_program(statics, reads)
        return self._programs[key]

    def _warn_unused_axes(self) -> None:
        """A mesh axis of more than one device that splits no argument, no result and nothing the body does:
        every device along it does the same work (a rule naming a dim no hint has, ``rules={"batch": "data"}``
        beside ``Tensor["b", ...]``).  Warned once, at the first call: a mesh shared by several functions may
        leave one of them an axis it does not use."""
        used: set[str] = set()
        for spec in [*(s.spec for s in self.leaf_specs.values()), *(o.spec if isinstance(o, NumberOr) else o for o in jax.tree.leaves(
                self.out_specs, is_leaf=lambda x: isinstance(x, PartitionSpec | NumberOr)))]:
            for entry in spec if isinstance(spec, PartitionSpec) else ():
                used.update(entry if isinstance(entry, tuple) else (entry,) if entry else ())
        used |= _strings_in(self.local)
        unused = [a for a, n in zip(self.mesh_spec.names, self.mesh_spec.sizes) if n > 1 and a not in used]
        if unused:
            axes = f"mesh axis {unused[0]!r} splits" if len(unused) == 1 else \
                f"mesh axes {', '.join(repr(a) for a in unused)} split"
            warnings.warn(f"{self.__name__}(): {axes} no argument, result or value of the function: every device "
                          f"along {'it' if len(unused) == 1 else 'them'} does the same work; map a dim to "
                          f"{'it' if len(unused) == 1 else 'each'} (rules={{'batch': {unused[0]!r}}}) or leave "
                          f"{'it' if len(unused) == 1 else 'them'} out of the mesh", RuntimeWarning,
                          stacklevel=_user_stacklevel())

    def _current_globals(self) -> tuple:
        """The module variables the body reads, as a cache key; the generated code's namespace (a copy
        of the module's, for ``@mesh``) is brought up to date first, so the trace reads the same."""
        if not self.globals_read:
            return ()
        source = getattr(self.origin, "__globals__", None) or self.local.__globals__
        target = self.local.__globals__
        key = []
        for name in self.globals_read:
            root, *path = name.split(".")  # CFG.act: a function an object of the module holds
            if root not in source:
                continue
            if path:
                if target is not source:
                    target[root] = source[root]
                value = source[root]
                for attr in path:
                    value = getattr(value, attr, None)
                key.append((name, _Identity(value) if _is_array(value) else _key(value)))
                continue
            value = source[name]
            if name in self.aliases and aliased(value) is not resolve_qualified(self.aliases[name]):
                raise self._placed(CallError(
                    f"{self.__name__}(): module name {name!r} holds {value!r} now; meshify rewrote the function "
                    f"calling it as {self.aliases[name]}, the function the module binds it to, with that function's "
                    "rule", fix=(f"regenerate the file after changing {name!r} (meshify convert), or "
                                 if self.origin is self.local else "")
                    + f"call the function you want by its own name in place of {name!r}")) from None
            if name in self.arrays_read:
                self._check_rank(name, value)
            if _is_array(value) and value.ndim and name not in self.arrays_read:
                raise self._placed(CallError(
                    f"{self.__name__}(): module variable {name!r} is now an array of shape {tuple(value.shape)}; "
                    "meshify rewrote the function taking it as a Python scalar",
                    fix=f"pass it as an argument with a Tensor hint, or keep {name!r} a Python number")) from None
            if name in self.constants and not same_literal(value, self.constants[name]):
                raise self._placed(CallError(
                    f"{self.__name__}(): module constant {name!r} is {value!r} now; meshify rewrote the function "
                    f"for {self.constants[name]!r}, its value in the source (an axis, a shape or a branch may "
                    "follow from it)",
                    fix=(f"keep {name!r} a value of Python literals (an array or a numpy scalar in it cannot be "
                         "rewritten for), " if self.origin is not self.local else
                         f"regenerate the file after changing {name!r} (meshify convert), ") + f"rebind it with a `global "
                        f"{name}` statement in a function of its module (then meshify reads it at each call and "
                        "never relies on its value), or pass it as an argument")) from None
            if target is not source:
                target[name] = value
            key.append((name, _Identity(value) if _is_array(value) else _key(value)))
        return tuple(key)

    def _check_rank(self, name: str, value: Any) -> None:
        """A module array rebound from outside keeps its number of dims (the rewrite named them): another rank,
        or a Python value where an array was, is an error here (it would fail, or broadcast, on a device's block)."""
        rank = value.ndim if _is_array(value) else None
        first = self.arrays_read.get(name)  # (its hint's; None: unhinted, read whole, any rank)
        if first is not None and rank != first:
            what = f"an array of shape {tuple(value.shape)}" if rank is not None else f"{type(value).__name__} {value!r}"
            raise self._placed(CallError(
                f"{self.__name__}(): module array {name!r} is now {what}; meshify rewrote the function for an "
                f"array of {first} dims (its hint names them)",
                fix=f"rebind {name!r} to an array of {first} dims, or pass it as an argument with a Tensor hint")) \
                from None

    def _warn_unhashable(self, statics: tuple[tuple[str, Any], ...]) -> None:
        """Once per function: an unhashable static value means a new program (and an XLA compile)
        on every call outside jax.jit."""
        if self._warned_unhashable:
            return
        self._warned_unhashable = True
        names = []
        for name, value in statics:
            try:
                hash(value)
            except TypeError:
                names.append(f"{name} ({type(value).__name__})")
        warnings.warn(f"{self.__name__}(): static argument {', '.join(names)} is unhashable, so the sharded "
                      "program is rebuilt and compiled again on every call; pass a hashable value (a tuple, a "
                      "NamedTuple, a frozen dataclass), or call it inside jax.jit", RuntimeWarning,
                      stacklevel=_user_stacklevel())

    def _build_program(self, statics: tuple[tuple[str, Any], ...],
                       reads: tuple[tuple, ...] = ()) -> tuple[Callable, Callable]:
        static_kwargs = dict(statics)
        n = len(self.leaf_specs)
        out_specs = self.out_specs
        if isinstance(out_specs, types.FunctionType):  # results chosen by static parameters: this call's
            out_specs = out_specs(**{p: static_kwargs[p] for p in inspect.signature(out_specs).parameters})

        arrays_read = [r for r in reads if len(r) == 2]  # (param, attr): an input; 3-tuples only key the cache

        def local(*leaves: Any) -> Any:
            kwargs = dict(static_kwargs)
            attrs: dict[str, dict[str, Any]] = {}
            for (param, attr), leaf in zip(arrays_read, leaves[n:]):
                attrs.setdefault(param, {})[attr] = leaf
            for param, arrays in attrs.items():
                kwargs[param] = _WithArrays(static_kwargs[param], arrays)
            out = _tuples(self.local(**self._unflatten(leaves[:n]), **kwargs), out_specs, (), lists)
            _numbers_out(out, out_specs, (), numbers.setdefault(current[0], {}))
            return out

        # A result a Python number or an array (mr.NumberOr) that is a number in this trace: the number itself
        # outside, as the function gives it (a constant of the trace, keyed by the arguments' shapes), never the
        # 0-d array shard_map makes of it.
        numbers: dict[Any, dict[tuple, Any]] = {}
        current: list[Any] = [None]

        # A list the function returns (jnp.split's, [a, b]) leaves as a tuple, whose out_specs the rewrite
        # wrote, and becomes a list again outside: the paths of those lists, found when the body is traced.
        lists: set[tuple[int, ...]] = set()
        in_specs = (*(s.spec for s in self.leaf_specs.values()), *(PartitionSpec() for _ in arrays_read))
        if _has_each(out_specs):
            # a list as long as each call's: the result's structure, from one trace, spells the specs out
            mapped_by: dict[tuple, Callable] = {}

            def program(*args: Any) -> Any:
                key = current[0] = tuple((a.shape, str(a.dtype)) for a in args)
                if key not in mapped_by:
                    probe = jax.shard_map(local, mesh=self.mesh, in_specs=in_specs, out_specs=PartitionSpec(),
                                          check_vma=False)
                    shapes = jax.eval_shape(probe, *(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args))
                    mapped_by[key] = jax.shard_map(local, mesh=self.mesh, in_specs=in_specs,
                                                   out_specs=_spelled_out(out_specs, shapes), check_vma=True)
                return _relisted(mapped_by[key](*args), (), lists)

            jitted = jax.jit(program)

            def with_numbers(run: Callable) -> Callable:
                def call(*args: Any) -> Any:
                    out = run(*args)
                    found = numbers.get(tuple((a.shape, str(a.dtype)) for a in args))
                    return _numbers_in(out, found, ()) if found else out
                return call

            return with_numbers(program), with_numbers(jitted)
        mapped = jax.shard_map(local, mesh=self.mesh, in_specs=in_specs, out_specs=out_specs, check_vma=True)

        def program(*args: Any) -> Any:
            return _relisted(mapped(*args), (), lists)

        return program, jax.jit(program)

    @property
    def shardings(self) -> dict[str, Any]:
        """Each array argument's sharding on the mesh (a pytree of them for pytree arguments)."""
        return self._unflatten(list(self._leaf_shardings().values()))

    def _leaf_shardings(self) -> dict[str, NamedSharding]:
        return {name: NamedSharding(self.mesh, spec.spec) for name, spec in self.leaf_specs.items()}

    def place(self, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """The arguments, with each array put on the mesh in its sharding (statics as given).

        Place parameters once before a training loop so that every step, its gradients and
        the optimizer state keep these shardings instead of moving data each call.
        """
        version = self._version(args, kwargs)
        if version is not self:
            return version.place(*args, **kwargs)
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise CallError(f"{self.__name__}.place(): {e}", fix="pass one value per parameter") from None
        bound.apply_defaults()
        if self._sequences:
            return self._for_lengths(bound).place(*args, **kwargs)
        placed = self._unflatten(self._place(self._flatten(bound)))
        return tuple(placed.get(name, value) for name, value in bound.arguments.items())

    def lower(self, *args: Any, **kwargs: Any) -> Any:
        """``jax.jit(...).lower`` of the program for these arguments (for HLO inspection)."""
        version = self._version(args, kwargs)
        if version is not self:
            return version.lower(*args, **kwargs)
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        if self._sequences:
            return self._for_lengths(bound).lower(*args, **kwargs)
        statics = tuple((n, v) for n, v in bound.arguments.items() if n not in self.args)
        names, extra = _split_reads(self._check_statics(statics))
        placed = self._place(self._flatten(bound))
        extra = [from_host(v, NamedSharding(self.mesh, PartitionSpec())) for v in extra]
        return self._traced(lambda: self._program(statics, names)[1].lower(*placed, *extra), placed)

    def _place(self, arrays: Sequence[Any]) -> list[jax.Array]:
        """Checks the arrays, then puts each on the mesh in its sharding (see ``from_host``).

        ``process_local`` blocks are joined first, so that the checks see global shapes.
        """
        if any(isinstance(a, ProcessLocal) for a in arrays):
            arrays = [self._join(name, a) if isinstance(a, ProcessLocal) else a
                      for name, a in zip(self.leaf_specs, arrays)]
        self._check(arrays)
        return [from_host(a, s) for a, s in zip(arrays, self._leaf_shardings().values())]

    def _join(self, name: str, block: ProcessLocal) -> jax.Array:
        """One global array from every process's ``process_local`` block of argument ``name``."""
        sharding = NamedSharding(self.mesh, self.leaf_specs[name].spec)
        try:
            return from_host(block, sharding)
        except (ValueError, TypeError) as e:
            shape = getattr(block.data, "shape", None)
            raise CallError(
                f"{self.__name__}() on mesh {self.mesh_spec}: argument {name!r} is process_local with a block of "
                f"shape {shape} that cannot be this process's part of {sharding.spec}: {e}",
                fix="pass each process the block meshify.runtime.process_slice(global_shape, sharding) selects, "
                    "or the full array on every process") from None

    def _check(self, arrays: Sequence[Any]) -> None:
        """Collects every rank, size and divisibility problem, then raises one CallError."""
        problems: list[str] = []
        sizes: dict[str, tuple[int, str]] = {}
        fix = ""
        kinds: set[str] = set()  # which problems were found, for the fix
        for (name, spec), value in zip(self.leaf_specs.items(), arrays):
            if isinstance(value, ProcessLocal):
                problems.append(f"argument {name!r} is process_local, which only a direct call can place, not "
                                "one inside jax.jit or jax.grad (place it first with meshify.runtime.from_host and "
                                f"its sharding, Sharded.shardings[{name!r}])")
                continue
            shape = getattr(value, "shape", None)
            if shape is None:
                problems.append(f"argument {name!r} is {type(value).__name__}, not an array with dims "
                                f"{list(spec.dims)}")
                kinds.add("rank")
                continue
            if len(shape) != len(spec.dims):
                kinds.add("rank")
                problems.append(f"argument {name!r} has shape {tuple(shape)} (rank {len(shape)}) but its hint "
                                f"names {len(spec.dims)} dims {list(spec.dims)}")
                if not spec.dims and tuple(shape) in ((2,), (4,)) and str(getattr(value, "dtype", "")) == "uint32":
                    fix = (f"{name!r} looks like a raw key (jax.random.PRNGKey(...), a uint32[{shape[0]}] array): pass "
                           "a typed key, jax.random.key(...), a scalar, or hint its data as a dim: "
                           f"{name}: Annotated[jax.Array, \"key_data\"]")
                if not shape and _is_typed_key(value):
                    fix = (f"{name!r} is a typed key (jax.random.key(...)), a 0-d array: hint it "
                           f"{name}: Annotated[jax.Array, ()] (the raw uint32[2] data of jax.random.PRNGKey is what "
                           "takes a dim)")
                continue
            for i, (dim, size) in enumerate(zip(spec.dims, shape)):
                if dim in sizes and sizes[dim][0] != size:
                    kinds.add("size")
                    problems.append(f"dim {dim!r} is {size} in argument {name!r} but {sizes[dim][0]} in "
                                    f"argument {sizes[dim][1]!r}")
                sizes.setdefault(dim, (size, name))
                axes = spec.axes(i)
                shards = self.mesh_spec.size(axes)
                if size % shards:
                    kinds.add("divide")
                    problems.append(f"argument {name!r}: dim {dim!r} has size {size}, which mesh axis "
                                    f"{'x'.join(repr(a) for a in axes)} ({shards} shards) does not divide")
        if problems:
            fix = fix or "; ".join(text for kind, text in _FIXES if kind in kinds)
            culprit = next((n for n in self.leaf_specs if f"argument {n!r}" in problems[0]), "")
            raise self._placed(CallError(
                f"{self.__name__}() on mesh {self.mesh_spec}: "
                + ("; ".join(problems) if len(problems) == 1 else "\n  - " + "\n  - ".join(problems)),
                fix=fix), culprit.split(".")[0] or None)


#: The fix for each kind of problem :meth:`Sharded._check` finds, in the order they are given.
_FIXES = (("rank", ("pass each argument an array of the dims its hint names (in the signature's order), or change "
                    "the hint")),
          ("size", "pass arrays that agree on the size of each dim they share"),
          ("divide", ("pass arrays whose split dims are multiples of their mesh axes' sizes, or change the mesh or "
                      "the layout rules")))


def _split_reads(reads: list[tuple[str, str, Any]]) -> tuple[tuple, list[Any]]:
    """Attributes read off statics as the program's key (Python values by value, arrays by name, after
    them) and the arrays, which are the program's extra inputs in that order."""
    values = tuple((param, attr, _key(value)) for param, attr, value in reads if not _is_array(value))
    arrays = [(param, attr, value) for param, attr, value in reads if _is_array(value)]
    return (*values, *((param, attr) for param, attr, _ in arrays)), [value for _, _, value in arrays]


class _Identity:
    """An array in a cache key, by identity (arrays are not hashable; rebinding makes a new one)."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Identity) and other.value is self.value


def _strings_in(fn: Callable, depth: int = 3) -> set[str]:
    """The string constants of ``fn``'s code, its nested functions' and lambdas', and those of the functions of
    its module it calls (a helper's version), ``depth`` calls deep: the axis names its collectives spell."""
    code = getattr(inspect.unwrap(fn), "__code__", None)
    if code is None:
        return set()
    namespace = getattr(inspect.unwrap(fn), "__globals__", {})
    found: set[str] = set()
    stack = [code]
    while stack:
        c = stack.pop()
        for const in c.co_consts:
            if isinstance(const, str):
                found.add(const)
            elif isinstance(const, types.CodeType):
                stack.append(const)
        if depth:
            for name in c.co_names:
                called = namespace.get(name)
                if isinstance(called, types.FunctionType) and called is not fn \
                        and called.__module__ == getattr(fn, "__module__", None):
                    found |= _strings_in(called, depth - 1)
    return found


def _is_array(value: Any) -> bool:
    return isinstance(value, jax.Array | np.ndarray)


def _key(value: Any) -> Any:
    """A Python value read off a static argument, as part of a cache key: a later ``cfg.scale = 4.0``
    then builds the program again (the first trace baked the old value in)."""
    try:
        hash(value)
        return value
    except TypeError:
        return ("unhashable", type(value).__name__, repr(value))


class _WithArrays:
    """A static argument as the program sees it: the array attributes it reads (``self.w``) are the
    program's inputs of this call; every other attribute is the object's own."""

    __slots__ = ("_obj", "_arrays")

    def __init__(self, obj: Any, arrays: dict[str, Any]) -> None:
        object.__setattr__(self, "_obj", obj)
        object.__setattr__(self, "_arrays", arrays)

    def __getattr__(self, name: str) -> Any:
        arrays = object.__getattribute__(self, "_arrays")
        if name in arrays:
            return arrays[name]
        return getattr(object.__getattribute__(self, "_obj"), name)


@dataclass(frozen=True, slots=True)
class Each:
    """out_specs of a returned list as long as each call's (``new_ema.blocks`` of params with ``blocks:
    list[Block]``): ``item``, the specs of every item.  Spelled out per call: the result's structure is found
    by tracing the function once (``jax.eval_shape``), then each ``Each`` becomes a tuple of ``item``."""

    item: Any


@dataclass(frozen=True, slots=True)
class NumberOr:
    """out_specs of a result that is a Python number or an array as a static flag says (``m if m is not None else
    1.0``, ``m`` set under ``if cfg.use_m:``): ``spec``, the array's; a number, the same on every device, leaves as a
    0-d array (``P()``).  Spelled out per call from the traced result, as :class:`Each` is."""

    spec: PartitionSpec


@dataclass(frozen=True, slots=True)
class Fields:
    """out_specs of a returned dataclass with static fields (``register_dataclass(meta_fields=[...])``): the specs
    of its array fields, by name.  Its static fields' values are part of its structure, which shard_map compares
    with the result's: they are read off the result's structure, traced once (as :class:`Each` is spelled out)."""

    cls: type
    specs: Mapping[str, Any]


def _has_each(specs: Any) -> bool:
    if isinstance(specs, Each | Fields | NumberOr):
        return True
    if isinstance(specs, PartitionSpec):
        return False
    if isinstance(specs, dict):
        return any(_has_each(v) for v in specs.values())
    if isinstance(specs, tuple):  # (a NamedTuple of specs too)
        return any(_has_each(v) for v in specs)
    return False


def _spelled_out(specs: Any, out: Any) -> Any:
    """``specs`` with each :class:`Each` a tuple of its item's specs, one per item of ``out`` there."""
    if isinstance(specs, Each):
        return tuple(_spelled_out(specs.item, o) for o in out)
    if isinstance(specs, NumberOr):  # a number where the array is not 0-d: the same on every device
        return PartitionSpec() if not getattr(out, "shape", ()) and len(specs.spec) else specs.spec
    if isinstance(specs, Fields):  # the result's own node (its static fields' values), its arrays' specs in it
        if type(out) is not specs.cls:
            raise CallError(f"the function returned a {type(out).__name__} where meshify rewrote it to return a "
                            f"{specs.cls.__name__}", fix="return the same class on every path")
        return dataclasses.replace(out, **{k: _spelled_out(v, getattr(out, k)) for k, v in specs.specs.items()})
    if isinstance(specs, PartitionSpec):
        return specs
    if isinstance(specs, dict):
        return {k: _spelled_out(v, out[k]) for k, v in specs.items()}
    if isinstance(specs, tuple) and hasattr(specs, "_fields"):
        return type(specs)(**{f: _spelled_out(getattr(specs, f), getattr(out, f)) for f in specs._fields})
    if isinstance(specs, tuple):
        return tuple(_spelled_out(s, o) for s, o in zip(specs, out))
    return specs


def _numbers_out(out: Any, specs: Any, path: tuple, found: dict[tuple, Any]) -> None:
    """Notes in ``found`` (path -> value) each result where ``specs`` holds :class:`NumberOr` that is a Python
    number in this trace."""
    if isinstance(specs, NumberOr):
        if isinstance(out, bool | int | float | complex):
            found[path] = out
    elif isinstance(specs, tuple) and not isinstance(specs, PartitionSpec) and isinstance(out, list | tuple):
        for i, (o, s) in enumerate(zip(out, specs)):
            _numbers_out(o, s, (*path, i), found)
    elif isinstance(specs, dict) and isinstance(out, dict):
        for k, s in specs.items():
            if k in out:
                _numbers_out(out[k], s, (*path, k), found)


def _numbers_in(out: Any, found: dict[tuple, Any], path: tuple) -> Any:
    """``out`` with the Python number :func:`_numbers_out` noted at each of its paths in place of the 0-d array."""
    if path in found:
        return found[path]
    if isinstance(out, tuple) and hasattr(out, "_fields"):
        return type(out)(*(_numbers_in(o, found, (*path, i)) for i, o in enumerate(out)))
    if isinstance(out, list | tuple):
        return type(out)(_numbers_in(o, found, (*path, i)) for i, o in enumerate(out))
    if isinstance(out, dict):
        return {k: _numbers_in(v, found, (*path, k)) for k, v in out.items()}
    return out


def _tuples(out: Any, specs: Any, path: tuple, lists: set) -> Any:
    """``out`` with each list where ``specs`` holds a tuple made a tuple (its path noted in ``lists``)."""
    if isinstance(specs, Each) and isinstance(out, list | tuple) and not hasattr(out, "_fields"):
        return _tuples(out, (specs.item,) * len(out), path, lists)
    if isinstance(specs, tuple) and hasattr(specs, "_fields") and hasattr(out, "_fields") and type(out) is type(specs):
        return type(out)(*(_tuples(o, s, (*path, f), lists) for o, s, f in zip(out, specs, specs._fields)))
    if isinstance(specs, tuple) and not isinstance(specs, PartitionSpec) and not hasattr(specs, "_fields") \
            and isinstance(out, list | tuple) and not hasattr(out, "_fields"):
        if isinstance(out, list):
            lists.add(path)
        return tuple(_tuples(o, s, (*path, i), lists) for i, (o, s) in enumerate(zip(out, specs))) \
            if len(out) == len(specs) else tuple(out)
    if isinstance(specs, dict) and isinstance(out, dict):
        return {k: _tuples(v, specs.get(k), (*path, k), lists) for k, v in out.items()}
    return out


def _relisted(out: Any, path: tuple, lists: set) -> Any:
    if isinstance(out, tuple) and hasattr(out, "_fields"):
        return type(out)(*(_relisted(o, (*path, f), lists) for o, f in zip(out, out._fields)))
    if isinstance(out, tuple) and not hasattr(out, "_fields"):
        items = [_relisted(o, (*path, i), lists) for i, o in enumerate(out)]
        return items if path in lists else tuple(items)
    if isinstance(out, dict):
        return {k: _relisted(v, (*path, k), lists) for k, v in out.items()}
    return out


def aliased(value: Any) -> Any:
    """The function a module alias holds: ``partial(jnp.einsum, ...)``'s ``jnp.einsum``; else the value."""
    while isinstance(value, functools.partial):
        value = value.func
    return value


@functools.cache
def resolve_qualified(name: str) -> Any:
    """``"jax.numpy.dot"`` -> the object (the longest importable module prefix, then attributes); None if none."""
    import importlib

    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            value = getattr(value, attr, None)
        return value
    return None


def bind(local: Callable[..., Any], mesh: MeshSpec, args: Mapping[str, ArgSpec], out_specs: Any,
         *, devices: Sequence[jax.Device] | None = None,
         reads: Mapping[str, Mapping[str, tuple[str, ...] | None]] | None = None,
         globals_read: Sequence[str] = (), constants: Mapping[str, Any] | None = None,
         flags: Mapping[str, bool] | None = None, fallbacks: Mapping[str, str] | None = None,
         arrays_read: Mapping[str, int | None] | Sequence[str] = (), aliases: Mapping[str, str] | None = None
         ) -> Sharded:
    """Wraps a per-device function as a global sharded callable (see :class:`Sharded`)."""
    return Sharded(local, mesh, args, out_specs, devices=devices, reads=reads, globals_read=globals_read,
                   constants=constants, flags=flags, fallbacks=fallbacks, arrays_read=arrays_read, aliases=aliases)


class _Reference:
    """``.reference`` of a sharded program wrapped by ``jax.jit``: resolved when first used (a converted
    file's reference imports the original file, which must not happen while the converted one loads)."""

    def __init__(self, program: Sharded) -> None:
        self._program = program

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._program.reference(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._program.reference, name)


def sharded(mesh: MeshSpec, args: Mapping[str, ArgSpec], out_specs: Any,
            reads: Mapping[str, Mapping[str, tuple[str, ...] | None]] | None = None,
            globals_read: Sequence[str] = (), constants: Mapping[str, Any] | None = None,
            flags: Mapping[str, bool] | None = None,
            fallbacks: Mapping[str, str] | None = None, arrays_read: Mapping[str, int | None] | Sequence[str] = (),
            aliases: Mapping[str, str] | None = None) -> Callable[[Callable], Sharded]:
    """Decorator form of :func:`bind`, used by generated code; ``reads`` names the attributes the
    function reads off its static arguments, checked at each call to hold no array; ``globals_read``
    the module variables it reads, whose current values key the program; ``flags`` the static flags'
    values this version was rewritten for (its other versions are ``@f.variant``s)."""
    return lambda local: bind(local, mesh, args, out_specs, reads=reads, globals_read=globals_read,
                              constants=constants, flags=flags, fallbacks=fallbacks, arrays_read=arrays_read,
                              aliases=aliases)
