"""Optional arrays of a ``@mesh`` function: ``bias: Tensor["d"] | None = None``.

Whether such a parameter is None or an array is decided per call, and the body may do different
things for each (``if bias is None:`` is taken statically), so the function is rewritten once per
combination: the first version takes every optional parameter as an array, each further version
takes some of them as None (a static None, never an input).  The generated file defines the first
version as usual and registers each further one on it with ``@f.variant``; the runtime picks the
version from which arguments are None (``Sharded.variant``).

After this module, a rewriter knows which optional parameters are None in its version
(``FunctionRewriter(..., nones=...)``) and reads the others' hints as plain array hints.
"""

from __future__ import annotations

from itertools import combinations

import libcst as cst

from meshify.errors import AnnotationError
from meshify.rewrite._context import ModuleContext

__all__ = ["MAX_OPTIONAL", "none_patterns", "optional_inner", "optional_params"]

_OPTIONAL_NAMES = frozenset({"typing.Optional", "typing_extensions.Optional"})
_UNION_NAMES = frozenset({"typing.Union", "typing_extensions.Union"})
#: More optional arrays than this would mean 2**n rewrites of one function: refused with a fix.
MAX_OPTIONAL = 3


def _is_none(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "None"


def optional_inner(ctx: ModuleContext, hint: cst.BaseExpression) -> cst.BaseExpression | None:
    """The hint inside ``X | None``, ``None | X``, ``Optional[X]`` or ``Union[X, None]``, else None."""
    from meshify.rewrite._hints import resolve_alias

    hint = resolve_alias(ctx, hint)
    if isinstance(hint, cst.BinaryOperation) and isinstance(hint.operator, cst.BitOr):
        sides = [hint.left, hint.right]
    elif isinstance(hint, cst.Subscript) and ctx.qualified_names(hint.value) & (_OPTIONAL_NAMES | _UNION_NAMES):
        sides = [e.slice.value for e in hint.slice if isinstance(e.slice, cst.Index)]
        if ctx.qualified_names(hint.value) & _OPTIONAL_NAMES:
            sides.append(cst.Name("None"))
    else:
        return None
    rest = [s for s in sides if not _is_none(s)]
    return rest[0] if len(rest) == 1 and len(sides) == 2 else None


def optional_params(ctx: ModuleContext, fn: cst.FunctionDef) -> list[str]:
    """The parameters whose hint is an optional array (or pytree of arrays) hint, in order, and the optional
    fields of the pytree parameters' classes (``"Linear.b"``: one choice for every ``Linear`` of the call)."""
    from meshify.rewrite._hints import read_dims, read_struct

    found: list[str] = []
    p = fn.params
    for param in (*p.posonly_params, *p.params, *p.kwonly_params):
        inner = optional_inner(ctx, param.annotation.annotation) if param.annotation else None
        hint = inner if inner is not None else param.annotation.annotation if param.annotation else None
        struct = read_struct(ctx, hint) if hint is not None and read_dims(ctx, hint) is None else None
        if inner is not None and (read_dims(ctx, inner) is not None or struct is not None):
            found.append(param.name.value)
        # a pytree's optional fields (Linear.b: Tensor["f"] | None), each class's field one choice for all its uses
        found += [group for group in (struct.optional_groups() if struct is not None else ()) if group not in found]
        if len(found) > MAX_OPTIONAL:
            raise ctx.error(AnnotationError, param, f"{fn.name.value}() has more than {MAX_OPTIONAL} optional "
                            f"arrays ({', '.join(found)}); meshify rewrites it once per combination of them being "
                            "None", f"make {found[-1]!r} required (or group the optional arrays in one "
                            "NamedTuple that is None or not)")
    return found


def none_patterns(ctx: ModuleContext, fn: cst.FunctionDef) -> list[frozenset[str]]:
    """Which optional parameters are None, per version: none of them first, then each combination
    by size (``[{}, {bias}, {pos}, {bias, pos}]``)."""
    names = optional_params(ctx, fn)
    return [frozenset(chosen) for n in range(len(names) + 1) for chosen in combinations(names, n)]
