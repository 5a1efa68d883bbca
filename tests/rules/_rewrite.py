"""``assert_rewrite(before, after)``: one op rule's rewrite as text, as LibCST's assertCodemod does.

``before`` is the body of a ``@mesh`` function (dedented), with its parameters' hints and mesh
given separately; ``after`` is the rewritten body, ``# meshify:`` comments included.  No
devices, no JAX tracing: only the source transformation.
"""

from __future__ import annotations

import textwrap

from meshify.rewrite import convert_source

HEADER = '''\
import jax
import jax.numpy as jnp
import jax.scipy.special
from meshify import Tensor, mesh


'''


def rewrite(body: str, params: str, returns: str, mesh: str = "batch=2, model=4") -> str:
    """The rewritten body of ``def f(params) -> returns: body`` under ``@mesh(mesh)``."""
    source = HEADER + f"@mesh({mesh})\ndef f({params}) -> {returns}:\n" + textwrap.indent(
        textwrap.dedent(body).strip() + "\n", "    ")
    text = convert_source(source, "case.py", width=None).text  # one line per statement, as rules write them
    lines = text[text.index("def f("):].splitlines()[1:]
    return textwrap.dedent("\n".join(lines)).strip()


def assert_rewrite(body: str, after: str, params: str, returns: str, mesh: str = "batch=2, model=4") -> None:
    got = rewrite(body, params, returns, mesh)
    want = textwrap.dedent(after).strip()
    assert got == want, f"\n--- want\n{want}\n--- got\n{got}"
