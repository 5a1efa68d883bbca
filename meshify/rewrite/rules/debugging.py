"""Debugging calls inside a ``@mesh`` function: ``jax.debug.print``.

On one device ``jax.debug.print("loss {l}", l=loss)`` prints the whole value once.  Inside ``shard_map`` each
device would print its own block (or its partial sum), once per device.  So each array printed is made whole
first (a partial sum completed, a split array gathered, commented like any collective, and only for the print),
and ``mr.debug_print`` prints it on the first device of the mesh alone: the same text as on one device.
"""

from __future__ import annotations

from meshify.annotate._types import Layout
from meshify.errors import UnsupportedError
from meshify.rewrite._values import Array, Static, StructValue, TupleValue
from meshify.rewrite.rules._api import Call, Convert, Lowering, RuleContext, op

#: jax.debug.print's parameters that are options, not values to print.
_OPTIONS = frozenset({"fmt", "ordered", "partitioned", "skip_format_check", "_use_logging"})


@op("jax.debug.print", reads=("fmt", "args", "ordered", "kwargs"))
def _debug_print(ctx: RuleContext, call: Call):
    printed = [*call.args[1:], *(o for k, o in call.kwargs.items() if k not in _OPTIONS)]
    converts = []
    for o in printed:
        if isinstance(o.value, TupleValue | StructValue):
            raise ctx.error(UnsupportedError, o.original, f"jax.debug.print of the tuple or pytree "
                            f"{ctx.code(o.original)!r}", "print its arrays one by one (each its own {} field)")
        if isinstance(o.value, Array) and (o.value.layout.is_split or o.value.layout.partial):
            layout = o.value.layout
            converts.append(Convert(o, Layout(layout.dims, tuple(() for _ in layout.dims), frozenset()),
                                    "jax.debug.print"))
    return Lowering(Static.of(None), tuple(converts), callee="debug_print",
                    notes=("jax.debug.print: each value whole, printed by the first device alone",))
