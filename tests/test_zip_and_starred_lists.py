"""``zip`` of tuples and lists holding arrays, and starred lists whose length meshify does not know (``[*hs, x]``):
static restructurings, modelled item by item (numbers: tests/soundness/zip_of_lists_holding_arrays.py,
starred_lists_of_unknown_length.py).  What is refused is refused with a fix that keeps the mesh (never "map those
dims to no mesh axis": a zip moves no data)."""

from __future__ import annotations

import pytest

from meshify.errors import MeshifyError
from meshify.rewrite import convert_source

HEADER = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"], n: int = 3):
'''


def _convert(body: str) -> str:
    source = HEADER + "".join(f"    {line}\n" for line in body.strip().splitlines())
    return convert_source(source, "case.py").text


def test_unzipping_pairs_moves_no_data() -> None:
    text = _convert("""
pairs = [(x @ w1, x), (jnp.tanh(x @ w1), 2 * x)]
hs, xs = zip(*pairs)
return sum(xs) + hs[0].sum(-1, keepdims=True)
""")
    assert "    hs, xs = zip(*pairs)\n" in text, text
    assert "all_gather" not in text, text


def test_a_starred_list_of_unknown_length_is_such_a_list() -> None:
    text = _convert("""
hs = [x @ w1 * i for i in range(n)]
return [*hs, jnp.tanh(x @ w1)]
""")
    assert "return [*hs, jnp.tanh(x @ w1)]" in text, text
    assert 'out_specs=mr.P("batch", "model")' in text, text


@pytest.mark.parametrize("body, message", [
    ("hs = [x @ w1 * i for i in range(n)]\nreturn [*hs, x]", r"\[\*hs, x\]' joins a list of an array of layout"),
    ("hs = [x * i for i in range(n)]\nreturn list(zip(hs, [x, x @ w1]))", "zip of a list whose length meshify"),
    ("return list(zip(x, [x, x]))", "zip of 'x', an array of layout"),
    ("return list(zip(*x))", r"zip\(\*x\) of an array"),
    ("hs = [(x, x) for i in range(n)]\nreturn list(zip(*hs, [x]))", "beside other lists"),
    ("return list(zip([x], [x], strict=True)), list(zip([x], [x, x], strict=True))", "strict=True"),
])
def test_refused_zips_and_starred_lists_keep_the_mesh(body: str, message: str) -> None:
    with pytest.raises(MeshifyError, match=message) as caught:
        _convert(body)
    assert "no mesh axis" not in str(caught.value), caught.value
