"""Reading meshify's annotations from source text: ``Tensor[...]`` hints and ``@mesh(...)``.

Nothing here evaluates user code: hints are read from the CST and decorator arguments
with :func:`ast.literal_eval`, which accepts literals only.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from meshify.annotate._types import BROADCAST, MeshSpec, Rules
from meshify.errors import AnnotationError, MeshifyError
from meshify.rewrite._context import ModuleContext
from meshify.rewrite._imports import find_module

__all__ = ["MESH_NAMES", "TENSOR_NAMES", "StructHint", "hint_dtype", "is_integer_hint", "mesh_decorator", "read_dims",
           "read_example", "read_helper_items", "read_mesh_decorator", "read_mesh_dims", "read_mixed_return",
           "read_regather", "read_return_dims", "read_struct", "read_struct_return"]

TENSOR_NAMES = frozenset({"meshify.Tensor", "meshify.annotate.Tensor", "meshify.runtime.Tensor"})
MESH_NAMES = frozenset({"meshify.mesh", "meshify.annotate.mesh"})
_TUPLE_NAMES = frozenset({"tuple", "typing.Tuple", "builtins.tuple"})


#: PEP 593's ``Annotated``, whose metadata name an array's dims: ``Annotated[jax.Array, "batch", "d_model"]``.
ANNOTATED_NAMES = frozenset({"typing.Annotated", "typing_extensions.Annotated"})
#: The array types an ``Annotated[...]`` dims hint may annotate (``jnp.ndarray`` is ``jax.Array``).
ARRAY_NAMES = frozenset({"jax.Array", "jax.numpy.ndarray", "jaxtyping.Array", "numpy.ndarray"})


def _is_tensor(ctx: ModuleContext, node: cst.BaseExpression) -> bool:
    return bool(ctx.qualified_names(node) & TENSOR_NAMES)


#: jaxtyping's array annotations (``Float[Array, "batch d_model"]``), read without importing jaxtyping.
JAXTYPING_NAMES = frozenset(f"jaxtyping.{n}" for n in (
    "Float", "Int", "Integer", "UInt", "Bool", "Shaped", "Num", "Real", "Inexact", "Complex", "Float32",
    "Float16", "BFloat16", "Float64", "Int32", "Int64", "Int8", "UInt8", "UInt32", "Key"))
INTEGER_HINTS = frozenset(f"jaxtyping.{n}" for n in ("Int", "Integer", "UInt", "Int32", "Int64", "Int8", "UInt8",
                                                      "UInt32"))


def resolve_alias(ctx: ModuleContext, node: cst.BaseExpression) -> cst.BaseExpression:
    """The hint a module-level alias stands for (``Logits = Annotated[jax.Array, "batch", "vocab"]``, ``T:
    TypeAlias = Tensor[...]``, an alias of an alias, one imported from a module of the tree: ``from .dims
    import BTD``), as jaxtyping-style code names its hints; ``node`` itself for anything else."""
    for _ in range(8):  # (an alias of an alias; a cycle is no hint)
        if isinstance(node, cst.Attribute):  # import dims; x: dims.BTD
            found = module_constant(ctx, node)
            return _alias_from(*found, ctx, node) if found is not None else node
        if not isinstance(node, cst.Name):
            return node
        value = ctx.assignments.get(node.value)
        found = imported_constant(ctx, node.value) if value is None and node.value in ctx.import_refs else None
        if found is not None:
            return _alias_from(*found, ctx, node)
        if not isinstance(value, cst.Subscript | cst.Name | cst.BinaryOperation):
            return node
        node = value
    return node


def _alias_from(home: ModuleContext, value: cst.BaseExpression, ctx: ModuleContext,
                use: cst.BaseExpression) -> cst.BaseExpression:
    """The hint ``value`` of module ``home`` stands for, as ``ctx`` reads it at ``use``; ``use`` itself where
    it is no hint."""
    there = resolve_alias(home, value)
    return transplanted(home, ctx, there, use) if isinstance(there, cst.Subscript | cst.BinaryOperation) else use


def module_constant(ctx: ModuleContext, node: cst.BaseExpression) -> tuple[ModuleContext, cst.BaseExpression] | None:
    """The module and value of the top-level assignment ``H.RULES`` names, ``H`` a module of the tree that
    ``ctx`` imports (``import hints as H``, ``from . import hints as H``); None for anything else."""
    if not (isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name)):
        return None
    ref = ctx.import_refs.get(node.value.value)
    path = None if ref is None or ref.binds_root and "." in ref.module else \
        find_module(ctx.path, ref.level, ".".join(filter(None, [ref.module, ref.name])))
    home = ctx.imported(path) if path is not None else None
    there = home.assignments.get(node.attr.value) if home is not None else None
    return (home, there) if there is not None and node.attr.value not in home.declared_global else None


def imported_constant(ctx: ModuleContext, name: str) -> tuple[ModuleContext, cst.BaseExpression] | None:
    """The module and value of the top-level assignment that ``name``, imported by ``ctx`` from a module of
    the tree (``from .dims import BTD``, ``from config import RULES``), names; None for anything else."""
    home = ctx
    for _ in range(8):  # (re-exported through a package's __init__)
        ref = home.import_refs.get(name)
        if ref is None or ref.name is None or ref.binds_root:
            return None
        path = find_module(home.path, ref.level, ref.module)
        if path is None:
            return None
        home, name = home.imported(path), ref.name
        value = home.assignments.get(name)
        if value is not None:
            return (home, value) if name not in home.declared_global else None
    return None


def transplanted(home: ModuleContext, ctx: ModuleContext, value: cst.BaseExpression,
                 use: cst.CSTNode) -> cst.BaseExpression:
    """``value``, an expression of module ``home``, as module ``ctx`` reads it at ``use``: each name ``home``
    imports spelled by its full dotted name (``Tensor`` -> ``meshify.Tensor``, which ``ctx`` reads as that
    whether or not it imports it), every node reporting errors at ``use``."""
    fresh = cst.parse_expression(home.code(value))
    roots: set[cst.Name] = set()

    class _Roots(cst.CSTVisitor):  # (an attribute's own name is no reference: only the roots are qualified)
        def visit_Attribute(self, node: cst.Attribute) -> bool:
            node.value.visit(self)
            return False

        def visit_Name(self, node: cst.Name) -> None:
            roots.add(node)

    class _Qualify(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            full = home.imports.imports.get(original.value) if original in roots else None
            return cst.parse_expression(full) if full and original.value not in home.imports.shadowed else updated

    fresh.visit(_Roots())
    qualified = fresh.visit(_Qualify())

    class _Anchors(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            ctx.anchors[node] = use
            return True

    qualified.visit(_Anchors())
    return qualified


def _qualified(ctx: ModuleContext, node: cst.BaseExpression) -> set[str]:
    """Qualified names of a hint's generic or array type, through a module-level alias of one
    (``A = Annotated``, ``Array = jax.Array``)."""
    names = ctx.qualified_names(node)
    for _ in range(8):
        if not isinstance(node, cst.Name) or node.value in ctx.imports.imports:
            return names
        value = ctx.assignments.get(node.value)
        if not isinstance(value, cst.Name | cst.Attribute):
            return names
        node = value
        names = ctx.qualified_names(node)
    return names


def is_integer_hint(ctx: ModuleContext, node: cst.BaseExpression) -> bool:
    """Whether a hint says its array holds integers (jaxtyping's ``Int[...]`` family)."""
    node = resolve_alias(ctx, node)
    return isinstance(node, cst.Subscript) and bool(ctx.qualified_names(node.value) & INTEGER_HINTS)


#: jaxtyping's hints that name one dtype (or a kind whose default JAX takes: ``Int`` is int32).
_DTYPE_HINTS = {"Int": "int32", "Integer": "int32", "Int32": "int32", "Int64": "int32", "Int8": "int8",
                "Int16": "int16", "UInt": "uint32", "UInt32": "uint32", "UInt8": "uint8", "UInt16": "uint16",
                "Bool": "bool", "Float16": "float16", "BFloat16": "bfloat16", "Float32": "float32",
                "Float64": "float32", "Complex64": "complex64"}


def hint_dtype(ctx: ModuleContext, node: cst.BaseExpression) -> str | None:
    """The dtype a jaxtyping hint names (``Int8[Array, "b"]`` -> ``"int8"``), as JAX keeps it by default
    (64-bit as 32-bit); None for ``Float[...]``, ``Tensor[...]`` and others that name no one dtype."""
    node = resolve_alias(ctx, node)
    if not isinstance(node, cst.Subscript):
        return None
    for name in ctx.qualified_names(node.value):
        module, _, short = name.rpartition(".")
        if module == "jaxtyping" and short in _DTYPE_HINTS:
            return _DTYPE_HINTS[short]
    return None


def read_dims(ctx: ModuleContext, node: cst.BaseExpression) -> tuple[str, ...] | None:
    """The dims of a ``Tensor[...]``, ``Annotated[jax.Array, ...]`` or jaxtyping hint, or None when
    ``node`` is another kind of hint (a module-level alias of one is read as the hint it names)."""
    node = resolve_alias(ctx, node)
    names = _qualified(ctx, node.value) if isinstance(node, cst.Subscript) else set()
    if isinstance(node, cst.Subscript) and names & JAXTYPING_NAMES:
        return _read_jaxtyping(ctx, node)
    if isinstance(node, cst.Subscript) and names & ANNOTATED_NAMES:
        return _read_annotated(ctx, node)
    if not (isinstance(node, cst.Subscript) and names & TENSOR_NAMES):
        if isinstance(node, cst.Name | cst.Attribute) and _is_tensor(ctx, node):
            raise ctx.error(AnnotationError, node, "bare Tensor hint without dims",
                            'name the dims: Tensor["batch", "d_model"], or Tensor[()] for a scalar')
        return None
    return _string_dims(ctx, [e.slice for e in node.slice], "Tensor[...]", 'Tensor["batch", "d_model"]')


def _is_scalar(items: list[cst.BaseSlice]) -> bool:
    """``[()]``: the one item is an empty tuple."""
    return (len(items) == 1 and isinstance(items[0], cst.Index) and isinstance(items[0].value, cst.Tuple)
            and not items[0].value.elements)


def _string_dims(ctx: ModuleContext, items: list[cst.BaseSlice], what: str, example: str) -> tuple[str, ...]:
    """Dims from subscript items that are each a quoted name; one item may hold them all, space-separated
    (jaxtyping's one-string form, ``"batch d_model"``); ``()`` is a scalar."""
    if _is_scalar(items):
        return ()
    dims: list[str] = []
    for item in items:
        value = item.value if isinstance(item, cst.Index) else None
        if not isinstance(value, cst.SimpleString):
            bad = value if value is not None else item
            raise ctx.error(AnnotationError, bad, f"{what} dim {ctx.code(bad)} is not a string",
                            f"quote each dim name: {example} (got {ctx.code(bad)})")
        text = value.evaluated_value
        for name in (text.split() if isinstance(text, str) and len(items) == 1 else [text]):
            dims.append(_dim_name(ctx, value, name, what))
    return tuple(dims)


def _read_annotated(ctx: ModuleContext, node: cst.Subscript) -> tuple[str, ...] | None:
    """``Annotated[jax.Array, "batch", "d_model"]``: PEP 593 metadata naming the dims, the spelling type
    checkers and linters accept (the array type is what they check; the strings are plain values to
    them). None when the annotated type is not an array: ``Annotated[int, ...]`` is some other hint."""
    base = node.slice[0].slice
    if not (isinstance(base, cst.Index) and _qualified(ctx, base.value) & ARRAY_NAMES):
        return None
    if len(node.slice) == 1:
        raise ctx.error(AnnotationError, node, f"{ctx.code(node)} names no dims",
                        'name them after the type: Annotated[jax.Array, "batch", "d_model"], or '
                        "Annotated[jax.Array, ()] for a scalar")
    return _string_dims(ctx, [e.slice for e in node.slice[1:]], "Annotated[jax.Array, ...]",
                        'Annotated[jax.Array, "batch", "d_model"]')


def _dim_name(ctx: ModuleContext, node: cst.CSTNode, name: object, what: str) -> str:
    if name == BROADCAST:  # a dim of size 1 (a keepdims result, a class token's [1, 1, d_model]): never split
        return name
    if not isinstance(name, str) or not name.isidentifier() or name == "_":
        fix = 'use names like "batch" or "d_model"'
        if isinstance(name, str) and name[:1] in "*#." or name == "_" or str(name).isdigit():
            fix = ("meshify needs one plain name per dim: variadic (*batch), broadcast (#dim), anonymous (_), "
                   "and fixed-size dims are not supported; name the dim")
        raise ctx.error(AnnotationError, node, f"{what} dim {name!r} is not an identifier", fix)
    return name


def _read_jaxtyping(ctx: ModuleContext, node: cst.Subscript) -> tuple[str, ...]:
    elements = node.slice
    shape = elements[-1].slice.value if len(elements) == 2 and isinstance(elements[-1].slice, cst.Index) else None
    if not isinstance(shape, cst.SimpleString) or not isinstance(shape.evaluated_value, str):
        raise ctx.error(AnnotationError, node, f"jaxtyping hint {ctx.code(node)!r} has no literal shape string",
                        'write Float[Array, "batch d_model"]')
    return tuple(_dim_name(ctx, shape, name, "jaxtyping") for name in shape.evaluated_value.split())


_SEQUENCE_NAMES = frozenset({"list", "builtins.list", "typing.List", "typing.Sequence", "collections.abc.Sequence"})


def read_sequence_return(ctx: ModuleContext, fn: cst.FunctionDef, strict: bool = True) -> tuple[str, ...] | None:
    """The item dims of a return hint ``list[Tensor[...]]`` / ``tuple[Tensor[...], ...]`` /
    ``Sequence[Tensor[...]]`` (a list or tuple of arrays of one layout, of any length), or None. Not
    ``strict`` (a helper's hint), an item that is not a Tensor hint (``list[Block]``) gives None."""
    if fn.returns is None:
        return None
    hint = resolve_alias(ctx, fn.returns.annotation)
    if not isinstance(hint, cst.Subscript):
        return None
    names = ctx.qualified_names(hint.value) | ({hint.value.value} if isinstance(hint.value, cst.Name) else set())
    elements = [e.slice.value if isinstance(e.slice, cst.Index) else None for e in hint.slice]
    if not ((names & _TUPLE_NAMES and len(elements) == 2 and isinstance(elements[1], cst.Ellipsis))
            or (names & _SEQUENCE_NAMES and len(elements) == 1)):
        return None
    item = elements[0]
    dims = read_dims(ctx, item) if item is not None else None
    if dims is None and not strict:
        return None
    if dims is None:
        raise ctx.error(AnnotationError, item if item is not None else hint, f"return hint {ctx.code(hint)!r}: its "
                        "item is not a Tensor hint", 'write list[Tensor["batch", "d_model"]]')
    return dims


def _tuple_hint_items(ctx: ModuleContext, fn: cst.FunctionDef) -> list[cst.BaseExpression | None] | None:
    """The items of a return hint ``tuple[A, B, ...]`` (None for an item that is no plain index), else None."""
    if fn.returns is None:
        return None
    hint = resolve_alias(ctx, fn.returns.annotation)
    if not (isinstance(hint, cst.Subscript) and ctx.qualified_names(hint.value) & _TUPLE_NAMES):
        return None
    return [e.slice.value if isinstance(e.slice, cst.Index) else None for e in hint.slice]


def read_helper_items(ctx: ModuleContext, fn: cst.FunctionDef) -> tuple[tuple[str, ...] | None, ...] | None:
    """A helper's return hint ``tuple[A, B, ...]`` of a fixed length: each item's dims where it is a Tensor
    hint, else None (``tuple[Tensor["batch", "d_model"], Cache]``); None where the hint is not such a tuple
    or names no dims at all. (A ``@mesh`` function's hint is read by :func:`read_return_dims`.)"""
    values = _tuple_hint_items(ctx, fn)
    if values is None or any(isinstance(v, cst.Ellipsis) for v in values):
        return None  # tuple[Tensor[...], ...]: read_sequence_return
    items = tuple(read_dims(ctx, v) if v is not None else None for v in values)
    return items if any(d is not None for d in items) else None


def read_return_dims(ctx: ModuleContext, fn: cst.FunctionDef) -> tuple[str, ...] | tuple[tuple[str, ...], ...] | None:
    """The return hint's dims, or a tuple of them for ``tuple[Tensor[...], ...]``; None without a hint (each
    result then leaves in the layout it has, its partial sums completed) or with a hint of a list of arrays
    (:func:`read_sequence_return`)."""
    if fn.returns is None or read_sequence_return(ctx, fn) is not None:
        return None
    hint = resolve_alias(ctx, fn.returns.annotation)
    if isinstance(hint, cst.Subscript) and ctx.qualified_names(hint.value) & _TUPLE_NAMES:
        if read_mixed_return(ctx, fn) is not None:
            return None  # tuple[Tensor[()], Params]: each item pinned where it leaves
        items = []
        for element in hint.slice:
            value = element.slice.value if isinstance(element.slice, cst.Index) else element
            dims = read_dims(ctx, value)
            if dims is None:
                raise ctx.error(AnnotationError, value, f"tuple return item {ctx.code(value)!r} is not a Tensor hint",
                                'write tuple[Tensor["batch"], Tensor[()]]; a list of arrays is read as a whole return '
                                'hint only (-> list[Tensor["batch"]]): else drop the hint, and the results leave in '
                                'the layouts they have')
            items.append(dims)
        return tuple(items)
    dims = read_dims(ctx, hint)
    if dims is None and read_struct_return(ctx, fn) is not None:
        return None  # -> Cache: each field pinned where it leaves (read_struct_return)
    if dims is None:
        raise ctx.error(AnnotationError, hint, f"return hint {ctx.code(hint)!r} is not a Tensor hint",
                        'write -> Annotated[jax.Array, "batch", "d_model"] (or Tensor["batch", "d_model"]), '
                        "or a tuple[...] of them")
    return dims


def read_mixed_return(ctx: ModuleContext, fn: cst.FunctionDef
                      ) -> tuple[tuple[str, ...] | StructHint, ...] | None:
    """A return hint ``tuple[Tensor[()], Params]``: a tuple of a fixed length whose items are Tensor hints and at
    least one TypedDict, NamedTuple or dataclass with hinted fields: each item's dims or pytree hint; None for
    any other."""
    values = _tuple_hint_items(ctx, fn)
    if values is None or any(v is None or isinstance(v, cst.Ellipsis) for v in values):
        return None
    items: list[tuple[str, ...] | StructHint] = []
    for v in values:
        dims = read_dims(ctx, v)  # type: ignore[arg-type]
        struct = read_struct(ctx, v) if dims is None else None  # type: ignore[arg-type]
        if dims is None and (struct is None or struct.kind not in ("dict", "namedtuple", "dataclass")):
            return None
        if struct is not None:
            _no_list_fields(ctx, struct, v)  # type: ignore[arg-type]
        items.append(dims if dims is not None else struct)  # type: ignore[arg-type]
    return tuple(items) if any(isinstance(i, StructHint) for i in items) else None


def read_struct_return(ctx: ModuleContext, fn: cst.FunctionDef) -> StructHint | None:
    """A return hint naming a TypedDict, NamedTuple or dataclass with hinted fields (``-> Cache``): its fields' hints, which
    pin the fields of the result; None for any other hint."""
    if fn.returns is None:
        return None
    struct = read_struct(ctx, fn.returns.annotation)
    if struct is None or struct.kind not in ("dict", "namedtuple", "dataclass"):
        return None
    _no_list_fields(ctx, struct, fn.returns.annotation)
    return struct


def _no_list_fields(ctx: ModuleContext, struct: StructHint, where: cst.BaseExpression, path: str = "") -> None:
    """A return hint's TypedDict must not hold a list as long as each call's (``blocks: list[Block]``): such a
    field leaves as each call's list without a hint (``mr.Each``), and a TypedDict's is not pinned by one yet (a
    NamedTuple's is)."""
    for name, field in struct.fields:
        if isinstance(field, StructHint):
            if field.kind == "sequence" and struct.kind == "dict":  # (a NamedTuple's list field is pinned)
                raise ctx.error(AnnotationError, where, f"the return hint {ctx.code(where)} names "
                                f"{struct.cls}{path}.{name}, a list as long as each call's: meshify does not pin "
                                "such a field by a return hint yet", "drop the return hint: each field leaves in the "
                                "layout it has, a list of blocks as each call's (its items as their hints say)")
            _no_list_fields(ctx, field, where, f"{path}.{name}")


def mesh_decorator(ctx: ModuleContext, fn: cst.FunctionDef) -> cst.Decorator | None:
    """The ``@mesh(...)`` decorator of ``fn``, if it has one."""
    for decorator in fn.decorators:
        target = decorator.decorator
        func = target.func if isinstance(target, cst.Call) else target
        if ctx.qualified_names(func) & MESH_NAMES:
            return decorator
    return None


def read_mesh_decorator(ctx: ModuleContext, decorator: cst.Decorator) -> tuple[MeshSpec, Rules]:
    """The mesh and rules written in ``@mesh(...)``, which must be literals."""
    call = decorator.decorator
    if not isinstance(call, cst.Call):
        raise ctx.error(AnnotationError, call, "@mesh needs the mesh's axes", "write @mesh(batch=2, model=4)")
    axes: dict[str, int] = {}
    rules: object = None
    where: dict[str, cst.CSTNode] = {}
    for arg in _spread(ctx, call.args):
        if arg.keyword is None:
            raise ctx.error(AnnotationError, arg, f"@mesh takes keyword arguments only, got {ctx.code(arg.value)!r}",
                            "write @mesh(batch=2, model=4, rules={...})")
        name = arg.keyword.value
        if name in where:
            raise ctx.error(AnnotationError, arg.keyword, f"@mesh names {name!r} twice",
                            f"give {name!r} once: mesh axis names are unique")
        if name == "example":  # values of static parameters, read by read_example (calls allowed)
            where[name] = arg
            continue
        written, home = arg.value, ctx
        if isinstance(written, cst.Name) and ctx.assignments.get(written.value) is not None \
                and written.value not in ctx.declared_global and written.value not in ctx.imports.imports:
            written = ctx.assignments[written.value]  # rules=RULES: a module constant's literal (as the decorator reads it)
        elif isinstance(written, cst.Name) and written.value in ctx.import_refs:
            home, written = imported_constant(ctx, written.value) or (ctx, written)  # from .config import RULES
        elif isinstance(written, cst.Attribute):
            home, written = module_constant(ctx, written) or (ctx, written)  # rules=H.RULES
        try:
            value = ast.literal_eval(home.code(written))
        except (ValueError, SyntaxError):
            raise ctx.error(AnnotationError, arg.value,
                            f"@mesh argument {name}={ctx.code(arg.value)} is not a literal",
                            "write literal values so that meshify can read them without running the file, "
                            "e.g. model=4") from None
        where[name] = arg
        if name == "rules":
            rules = value
        elif name in ("dims", "reduce_dtype", "regather"):
            continue
        else:
            axes[name] = value
    try:
        spec = MeshSpec(tuple(axes), tuple(axes.values()))
    except MeshifyError as e:
        bad = next((n for n, v in axes.items() if n in e.headline), None)
        raise e.with_span(ctx.span(where.get(bad, call))) from None
    try:
        return spec, Rules.parse(spec, rules)
    except MeshifyError as e:
        raise e.with_span(ctx.span(where.get("rules", call))) from None


def _spread(ctx: ModuleContext, args: Sequence[cst.Arg]) -> list[cst.Arg]:
    """``@mesh(**TP, rules=R)`` with ``TP`` a module constant's dict literal of mesh axes (and ``rules``): its
    items as keyword arguments (as Python passes them), each placed at the ``**TP`` for messages."""
    out: list[cst.Arg] = []
    for arg in args:
        written = arg.value
        found = imported_constant(ctx, written.value) \
            if arg.star == "**" and isinstance(written, cst.Name) and written.value in ctx.import_refs else None
        if found is None and (arg.star != "**" or not isinstance(written, cst.Name)
                              or ctx.assignments.get(written.value) is None or written.value in ctx.declared_global
                              or written.value in ctx.imports.imports):
            out.append(arg)
            continue
        home, literal = found if found is not None else (ctx, ctx.assignments[written.value])
        if not isinstance(literal, cst.Dict) or not all(
                isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) for e in literal.elements):
            raise ctx.error(AnnotationError, arg, f"@mesh(**{written.value}): {written.value} is not a dict literal of "
                            "string keys", "write the mesh's axes in the decorator, or TP = {\"batch\": 2, \"model\": 4}")
        for e in literal.elements:
            key = ast.literal_eval(e.key.value)  # type: ignore[union-attr]
            if key in ("example", "dims", "reduce_dtype", "regather"):
                raise ctx.error(AnnotationError, arg, f"@mesh(**{written.value}) holds {key!r}",
                                f"write {key}= in the decorator itself; keep the mesh's axes and rules in "
                                f"{written.value}")
            value = e.value if home is ctx else transplanted(home, ctx, e.value, arg)
            spread = cst.Arg(value, keyword=cst.Name(key))
            ctx.anchors[spread] = ctx.anchors[spread.keyword] = arg  # type: ignore[index]
            out.append(spread)
    return out


#: What ``@mesh(reduce_dtype=...)`` may name: the dtype low-precision partial sums are all-reduced in.
REDUCE_DTYPES = ("float32", "bfloat16", "float16")


def _mesh_keyword(decorator: cst.Decorator | None, name: str) -> cst.Arg | None:
    """The ``name=`` argument of ``@mesh(...)``, if it is written."""
    call = decorator.decorator if decorator is not None else None
    if not isinstance(call, cst.Call):
        return None
    return next((arg for arg in call.args if arg.keyword is not None and arg.keyword.value == name), None)


def read_reduce_dtype(ctx: ModuleContext, decorator: cst.Decorator | None) -> str | None:
    """``@mesh(..., reduce_dtype="bfloat16")``: float16/bfloat16 partial sums are all-reduced in this
    dtype instead of float32 (half the bytes, the precision of a low-precision sum); None: float32."""
    arg = _mesh_keyword(decorator, "reduce_dtype")
    if arg is None:
        return None
    try:
        value = ast.literal_eval(ctx.code(arg.value))
    except (ValueError, SyntaxError):
        value = ctx.code(arg.value)
    if value is None:
        return None
    if value not in REDUCE_DTYPES:
        raise ctx.error(AnnotationError, arg.value, f"@mesh(reduce_dtype={ctx.code(arg.value)}) is not one of "
                        f"{', '.join(map(repr, REDUCE_DTYPES))}", 'write reduce_dtype="bfloat16" (a string)')
    return None if value == "float32" else value


def read_regather(ctx: ModuleContext, decorator: cst.Decorator | None) -> bool:
    """``@mesh(..., regather=False)``: the backward pass keeps the weights the forward pass gathered as
    FSDP's (fewer bytes moved, a whole weight per gathered use alive until its gradient); default True,
    gather them again."""
    arg = _mesh_keyword(decorator, "regather")
    if arg is None:
        return True
    if not (isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False")):
        raise ctx.error(AnnotationError, arg.value, f"@mesh(regather={ctx.code(arg.value)}) is not True or False",
                        "write regather=False to keep the gathered weights for the backward pass")
    return arg.value.value == "True"


def read_example(ctx: ModuleContext, fn: cst.FunctionDef, decorator: cst.Decorator | None
                 ) -> dict[str, cst.BaseExpression]:
    """``@mesh(..., example={"cfg": Config(layers=2)})`` (or ``example=dict(cfg=...)``): values for
    ``fn``'s static parameters that explain, verify and plan use where the signature gives none (a
    config without a default); name -> the value's expression.  The conversion never reads them: a call
    passes its own values."""
    arg = _mesh_keyword(decorator, "example")
    if arg is None or (isinstance(arg.value, cst.Name) and arg.value.value == "None"):
        return {}
    fix = 'write example={"cfg": Config(layers=2)}: a dict from static parameter names to values'
    entries: list[tuple[cst.CSTNode, str, cst.BaseExpression]] = []
    value = arg.value
    if isinstance(value, cst.Dict):
        for element in value.elements:
            key = element.key if isinstance(element, cst.DictElement) else None
            name = key.evaluated_value if isinstance(key, cst.SimpleString) else None
            if not isinstance(name, str):
                raise ctx.error(AnnotationError, key if key is not None else element,
                                f"@mesh(example=...) key {ctx.code(key) if key is not None else '**'} is not a "
                                "parameter name in quotes", fix)
            entries.append((key, name, element.value))  # type: ignore[arg-type]
    elif isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict" \
            and all(a.keyword is not None and not a.star for a in value.args):
        entries = [(a.keyword, a.keyword.value, a.value) for a in value.args]  # type: ignore[union-attr]
    else:
        raise ctx.error(AnnotationError, value, f"@mesh(example={ctx.code(value)}) is not a dict written out", fix)
    params = {p.name.value: p for p in (*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params)}
    found: dict[str, cst.BaseExpression] = {}
    for node, name, expr in entries:
        param = params.get(name)
        if param is None:
            raise ctx.error(AnnotationError, node, f"@mesh(example=...) names {name!r}, which is not a parameter "
                            f"of {fn.name.value}()", f"name one of its static parameters: {', '.join(params) or 'none'}")
        hint = param.annotation.annotation if param.annotation is not None else None
        if hint is not None and (read_dims(ctx, hint) is not None or read_struct(ctx, hint) is not None):
            raise ctx.error(AnnotationError, node, f"@mesh(example=...) gives {name!r}, an array parameter "
                            "(its hint names dims)", "give examples of static parameters only: meshify verify "
                            "draws arrays from their hints")
        if name in found:
            raise ctx.error(AnnotationError, node, f"@mesh(example=...) names {name!r} twice", "give it once")
        found[name] = expr
    return found


def read_mesh_dims(ctx: ModuleContext, decorator: cst.Decorator) -> dict[str, int]:
    """The dim sizes written in ``@mesh(..., dims={...})`` (a literal dict), or {}."""
    arg = _mesh_keyword(decorator, "dims")
    if arg is None:
        return {}
    try:
        value = ast.literal_eval(ctx.code(arg.value))
    except (ValueError, SyntaxError):
        raise ctx.error(AnnotationError, arg.value, "@mesh(dims=...) is not a literal dict",
                        'write dims={"batch": 8, "d_model": 512}') from None
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, int) for k, v in value.items()):
        raise ctx.error(AnnotationError, arg.value, f"@mesh(dims={value!r}) must map dim names to ints",
                        "write dims={\"batch\": 8, \"d_model\": 1024}")
    return value


#: Bases and decorators that make a class a pytree of its annotated fields.
_NAMEDTUPLE = frozenset({"typing.NamedTuple", "NamedTuple", "typing_extensions.NamedTuple"})
_TYPEDDICT = frozenset({"typing.TypedDict", "TypedDict", "typing_extensions.TypedDict"})
_DATACLASS = frozenset({"dataclasses.dataclass", "dataclass", "flax.struct.dataclass", "chex.dataclass",
                        "jax.tree_util.register_dataclass"})


@dataclass(frozen=True, slots=True)
class StructHint:
    """A pytree argument's class and its fields' hints (dims, or a nested StructHint)."""

    cls: str
    kind: str  # "namedtuple", "dataclass", "dict", "tuple" or "sequence" (one field ITEMS: each item's hint)
    #: Each field's dims or nested hint; None for an optional field in a version where it is None.
    fields: tuple[tuple[str, tuple[str, ...] | StructHint | None], ...]
    #: The fields hinted ``X | None`` (their hint in ``fields`` is X's): each call's value says which are None.
    optional: tuple[str, ...] = ()
    #: A dataclass's static fields (``register_dataclass(meta_fields=[...])``, ``field(metadata={"static": True})``,
    #: flax's ``struct.field(pytree_node=False)``): no arrays, not in ``fields``; static values when traced.
    meta: tuple[str, ...] = ()

    def without(self, nones: frozenset[str]) -> StructHint:
        """This hint in the version where the optional fields in ``nones`` (``"Linear.b"``: class and
        field) are None, in it and in its nested hints."""
        return StructHint(self.cls, self.kind, tuple(
            (name, None if name in self.optional and f"{self.cls}.{name}" in nones
             else f.without(nones) if isinstance(f, StructHint) else f) for name, f in self.fields), self.optional,
            self.meta)

    def optional_groups(self, none_only: bool = False) -> list[str]:
        """``"Class.field"`` of each optional field, here and in nested hints, in order and once each
        (``none_only``: those this hint's version takes as None)."""
        out = [f"{self.cls}.{name}" for name, f in self.fields if name in self.optional and (f is None or not none_only)]
        for _, f in self.fields:
            out += [g for g in f.optional_groups(none_only) if g not in out] if isinstance(f, StructHint) else []
        return out


def read_struct(ctx: ModuleContext, node: cst.BaseExpression, seen: tuple[str, ...] = ()) -> StructHint | None:
    """The fields of a hint naming a module-level NamedTuple, dataclass or TypedDict, or of a
    ``tuple[Tensor[...], ...]`` of a fixed length (fields "0", "1", ...), or of a sequence of any
    length (``tuple[Block, ...]``, ``list[Block]``: one field "*", each item's hint), else None."""
    node = resolve_alias(ctx, node)
    if isinstance(node, cst.Subscript) and ctx.qualified_names(node.value) & ANNOTATED_NAMES:
        return _renamed_struct(ctx, node, seen)
    if isinstance(node, cst.Subscript) and ctx.qualified_names(node.value) & (_TUPLE | _LIST):
        return _sequence_struct(ctx, node, seen) or _tuple_struct(ctx, node, seen)
    if isinstance(node, cst.Subscript) and ctx.qualified_names(node.value) & _DICT and len(node.slice) == 2 \
            and isinstance(node.slice[1].slice, cst.Index):
        value = node.slice[1].slice.value
        if read_dims(ctx, value) is not None or read_struct(ctx, value, seen) is not None:
            # (taken as a static value, a dict of arrays would only be refused when called)
            raise ctx.error(AnnotationError, node, f"{ctx.code(node)}: a dict of arrays under keys each call "
                            "chooses: meshify reads a pytree's keys from its hint", "name the keys: class "
                            f"Params(TypedDict): a: {ctx.code(value)}; b: ... (a TypedDict with a hint per key), or "
                            "a NamedTuple")
    if isinstance(node, cst.Name | cst.Attribute) and not (isinstance(node, cst.Name) and node.value in ctx.classes):
        return _imported_struct(ctx, node, seen)  # from .types import Params; T.Params
    if not isinstance(node, cst.Name):
        return None
    cls = ctx.classes.get(node.value)
    if cls is None:
        return None
    if node.value in seen:
        raise ctx.error(AnnotationError, node, f"class {node.value} contains itself", "use a flat structure")
    kind = _struct_kind(ctx, cls)
    if kind is None:
        return None  # not a pytree class: a static value
    from meshify.rewrite._optional import optional_inner

    fields: list[tuple[str, tuple[str, ...] | StructHint | None]] = []
    optional: list[str] = []
    for stmt in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if not isinstance(small, cst.AnnAssign) or not isinstance(small.target, cst.Name):
                continue
            hint = small.annotation.annotation
            wrapped = optional_inner(ctx, hint)
            if wrapped is not None and (read_dims(ctx, wrapped) is not None
                                        or read_struct(ctx, wrapped, (*seen, node.value)) is not None):
                optional.append(small.target.value)  # b: Tensor["f"] | None: each call says which it is
                hint = wrapped
            dims = read_dims(ctx, hint)
            inner = None if dims is not None else read_struct(ctx, hint, (*seen, node.value))
            fields.append((small.target.value, dims if dims is not None else inner))
    if all(f is None for _, f in fields):
        return None  # a config of static values (ints, floats, flags): passed through unchanged
    meta = _meta_fields(ctx, cls) if kind == "dataclass" else set()
    for name, f in fields:
        if f is None and name not in meta:
            raise ctx.error(AnnotationError, node, f"field {node.value}.{name} has no Tensor hint, but other "
                            f"fields of {node.value} do",
                            "every field of a pytree argument needs a Tensor[...] hint (or a nested "
                            "NamedTuple/dataclass); keep static values in a separate config argument, or declare "
                            "the field static (register_dataclass(meta_fields=[...]), or dataclasses.field(metadata="
                            "{'static': True}) under @jax.tree_util.register_dataclass)")
    return StructHint(node.value, kind, tuple((k, f) for k, f in fields if k not in meta),  # type: ignore[arg-type]
                      tuple(optional), tuple(k for k, _ in fields if k in meta))


def _meta_fields(ctx: ModuleContext, cls: cst.ClassDef) -> set[str]:
    """The static fields a dataclass declares: ``meta_fields=[...]`` of a ``register_dataclass`` decorator (a
    ``functools.partial`` of it), or fields made by ``dataclasses.field(metadata={"static": True})`` (or
    ``dict(static=True)``) or flax's ``struct.field(pytree_node=False)``."""
    out: set[str] = set()
    for decorator in cls.decorators:
        call = decorator.decorator
        if not isinstance(call, cst.Call):
            continue
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value == "meta_fields" \
                    and isinstance(arg.value, cst.List | cst.Tuple):
                out |= {e.value.evaluated_value for e in arg.value.elements
                        if isinstance(e.value, cst.SimpleString)}
    for stmt in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
        for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) \
                    and isinstance(small.value, cst.Call) and _static_field(ctx, small.value):
                out.add(small.target.value)
    return out


def _static_field(ctx: ModuleContext, call: cst.Call) -> bool:
    """``dataclasses.field(metadata={"static": True})`` / ``dict(static=True)``, ``struct.field(pytree_node=False)``."""
    names = ctx.qualified_names(call.func)
    for arg in call.args:
        key = arg.keyword.value if arg.keyword is not None else None
        if key == "pytree_node" and names & {"flax.struct.field"} and isinstance(arg.value, cst.Name) \
                and arg.value.value == "False":
            return True
        if key != "metadata" or not names & {"dataclasses.field", "field"}:
            continue
        value = arg.value
        if isinstance(value, cst.Dict):
            return any(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString)
                       and e.key.evaluated_value == "static" and isinstance(e.value, cst.Name) and e.value.value == "True"
                       for e in value.elements)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
            return any(a.keyword is not None and a.keyword.value == "static" and isinstance(a.value, cst.Name)
                       and a.value.value == "True" for a in value.args)
    return False


def _imported_struct(ctx: ModuleContext, node: cst.Name | cst.Attribute, seen: tuple[str, ...]) -> StructHint | None:
    """A hint naming a class another module of the tree defines (``Params`` of ``from .types import Params``):
    its fields read in that module, each class named as the root module's code can name it (an import carried
    in where it binds none: ``from .types import Block``)."""
    from meshify.rewrite._imports import resolve_class

    found = resolve_class(ctx, node)
    if found is None:
        return None
    home, cls = found
    struct = read_struct(home, cst.Name(cls.name.value), seen)
    return _carried_classes(home, struct) if struct is not None else None


def _carried_classes(home: ModuleContext, struct: StructHint) -> StructHint:
    """``struct`` read in module ``home``, its classes of ``home`` named as the root module names them."""
    from meshify.rewrite._imports import carry_class

    fields = tuple((k, _carried_classes(home, f) if isinstance(f, StructHint) else f) for k, f in struct.fields)
    named = struct.kind in ("namedtuple", "dataclass", "dict") and struct.cls in home.classes
    return StructHint(carry_class(home, struct.cls) if named else struct.cls, struct.kind, fields, struct.optional,
                      struct.meta)


def _renamed_struct(ctx: ModuleContext, node: cst.Subscript, seen: tuple[str, ...]) -> StructHint | None:
    """``Annotated[Mlp, {"d_in": "patch", "d_hidden": "tok_ff"}]``: the class's fields with its dims
    renamed, for one class used with different dims (an MLP-Mixer's token and channel MLPs share one
    ``Mlp``).  The dict is plain metadata to type checkers; dims it does not name keep their names."""
    base = node.slice[0].slice
    if not isinstance(base, cst.Index):
        return None
    struct = read_struct(ctx, base.value, seen)
    if struct is None:
        return None
    example = f'Annotated[{ctx.code(base.value)}, {{"d_in": "patch"}}]'
    metadata = [e.slice.value for e in node.slice[1:] if isinstance(e.slice, cst.Index)]
    if len(metadata) != 1 or len(node.slice) != 2 or not isinstance(metadata[0], cst.Dict):
        raise ctx.error(AnnotationError, node, f"{ctx.code(node)}: a pytree class's Annotated hint takes one dict "
                        "renaming its dims", f"write {example} (the class's dim -> this use's dim)")
    owned = _struct_dims(struct)
    renames: dict[str, str] = {}
    for element in metadata[0].elements:
        key = element.key if isinstance(element, cst.DictElement) else None
        value = element.value if isinstance(element, cst.DictElement) else element
        if not (isinstance(key, cst.SimpleString) and isinstance(value, cst.SimpleString)):
            raise ctx.error(AnnotationError, element, f"{ctx.code(element)} is not a pair of quoted dims",
                            f"write {example}")
        old, new = key.evaluated_value, _dim_name(ctx, value, value.evaluated_value, "renamed")
        if old not in owned:
            raise ctx.error(AnnotationError, key, f"{ctx.code(base.value)} has no dim {old!r} to rename "
                            f"(its dims: {', '.join(sorted(owned))})", "rename one of its dims")
        if old in renames:
            raise ctx.error(AnnotationError, key, f"dim {old!r} is renamed twice", "rename each dim once")
        renames[str(old)] = new
    return _rename_struct(struct, renames)


def _struct_dims(struct: StructHint) -> set[str]:
    out: set[str] = set()
    for _, f in struct.fields:
        out |= _struct_dims(f) if isinstance(f, StructHint) else set(f)
    return out


def _rename_struct(struct: StructHint, renames: dict[str, str]) -> StructHint:
    return StructHint(struct.cls, struct.kind, tuple(
        (name, _rename_struct(f, renames) if isinstance(f, StructHint) else tuple(renames.get(d, d) for d in f))
        for name, f in struct.fields), struct.optional, struct.meta)


_TUPLE = frozenset({"tuple", "typing.Tuple"})
_LIST = frozenset({"list", "typing.List"})
_DICT = frozenset({"dict", "typing.Dict", "typing.Mapping", "collections.abc.Mapping", "builtins.dict"})
#: The field name of a sequence's items in a StructHint (and in the runtime's TreeSpec).
ITEMS = "*"


def _sequence_struct(ctx: ModuleContext, node: cst.Subscript, seen: tuple[str, ...]) -> StructHint | None:
    """``tuple[Block, ...]`` / ``list[Block]`` of hinted items: a sequence whose length each call's
    argument gives (the program is built per length); every item has the item hint's layout."""
    items = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
    is_list = bool(ctx.qualified_names(node.value) & _LIST)
    if len(items) != len(node.slice) or (is_list and len(items) != 1) or \
            (not is_list and (len(items) != 2 or not isinstance(items[1], cst.Ellipsis))):
        return None
    dims = read_dims(ctx, items[0])
    item = dims if dims is not None else read_struct(ctx, items[0], seen)
    if item is None:
        return None  # a sequence of static values
    if isinstance(item, StructHint) and item.optional_groups():
        group = item.optional_groups()[0]
        raise ctx.error(AnnotationError, items[0], f"{ctx.code(node)}: items with an optional array field ({group}): "
                        "meshify reads optional fields of a pytree argument, not yet of the items of a sequence "
                        "(each item could be None or not)", f"make {group.split('.')[1]} required in the items "
                        "(items without one hold an array that does nothing: zeros, an identity)")
    return StructHint("list" if is_list else "tuple", "sequence", ((ITEMS, item),))


def _tuple_struct(ctx: ModuleContext, node: cst.Subscript, seen: tuple[str, ...]) -> StructHint | None:
    """``tuple[Tensor["b", "d"], Tensor["b", "d"]]``: each item an array (or a nested pytree)."""
    fields: list[tuple[str, tuple[str, ...] | StructHint]] = []
    for i, element in enumerate(node.slice):
        if not isinstance(element.slice, cst.Index):
            return None
        hint = element.slice.value
        if isinstance(hint, cst.Ellipsis):
            raise ctx.error(AnnotationError, hint, f"{ctx.code(node)}: a tuple of any length of static values",
                            "hint the items: tuple[Block, ...] of a hinted NamedTuple, or tuple[Tensor[...], ...]")
        dims = read_dims(ctx, hint)
        inner = None if dims is not None else read_struct(ctx, hint, seen)
        if dims is None and inner is None:
            return None  # a tuple of static values
        fields.append((str(i), dims if dims is not None else inner))
    return StructHint("tuple", "tuple", tuple(fields)) if fields else None


def _struct_kind(ctx: ModuleContext, cls: cst.ClassDef) -> str | None:
    for base in cls.bases:
        names = ctx.qualified_names(base.value)
        if names & _NAMEDTUPLE:
            return "namedtuple"
        if names & _TYPEDDICT:
            return "dict"
    for decorator in cls.decorators:
        target = decorator.decorator.func if isinstance(decorator.decorator, cst.Call) else decorator.decorator
        if ctx.qualified_names(target) & _DATACLASS:
            return "dataclass"
    return None
