"""A ``+``/``-`` chain of partial sums over several axes (``v - x @ w1 + x @ w2 * 0.5 - x @ w3 + jnp.sum(v, 0)``):
the terms partial over the same axes are added first and completed by one psum, so the compiled program
all-reduces one array per axis, not one per term (XLA would fuse those into one tuple all-reduce of as many
arrays: the shapes tell them apart).  Numbers: tests/soundness/sum_of_partial_sums_over_several_axes*.py,
tree_reduce_of_mapped_trees.py."""

from __future__ import annotations

import importlib.util
import sys

import jax
import numpy as np
import pytest

from meshify.rewrite import convert_source
from tests.cases.harness import collective_shapes

SOURCE = '''\
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def chain(x: Tensor["batch", "f"], w1: Tensor["f", "d"], w2: Tensor["f", "d"], w3: Tensor["f", "d"],
          v: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return v - x @ w1 + x @ w2 * 0.5 - x @ w3 + jnp.sum(v, axis=0)


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def whole_first(x: Tensor["batch", "f"], w1: Tensor["f", "d"], w2: Tensor["f", "d"], w3: Tensor["f", "d"],
                v: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return v + x @ w1 - x @ w2 + 2.0 + x @ w3


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def scalars(x: Tensor["batch", "f"], w1: Tensor["f", "d"], w2: Tensor["f", "d"], w3: Tensor["f", "d"],
            v: Tensor["batch", "d"]):
    return 1.0 - jnp.sum(x) + jnp.sum(v) + jnp.sum(x * x) - jnp.mean(v)
'''

#: Each function's all-reduces once its terms are grouped, (kind, shape); as written: 4, 3 and 4 psums.
EXPECTED = {
    "chain": [("all-reduce", "f32[2,8]"), ("all-reduce", "f32[8]")],
    "whole_first": [("all-reduce", "f32[2,8]")],
    "scalars": [("all-reduce", "f32[]"), ("all-reduce", "f32[]")],
}


def _module(path: str, tmp_path):
    text = SOURCE
    original = tmp_path / "groups.py"  # (.reference of the converted file imports it)
    original.write_text(text)
    if path == "converted":
        text = convert_source(text, str(original)).text
    file = tmp_path / f"groups_{path}.py"
    file.write_text(text)
    spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[file.stem] = module
    spec.loader.exec_module(module)
    return module


def _args():
    rng = np.random.default_rng(35)
    return (rng.standard_normal((4, 16)).astype(np.float32),
            *((rng.standard_normal((16, 8)) * 0.3).astype(np.float32) for _ in range(3)),
            rng.standard_normal((4, 8)).astype(np.float32))


@pytest.mark.parametrize("path", ["decorator", "converted"])
def test_partial_sums_over_one_axis_in_a_sum_all_reduce_once(path: str, tmp_path) -> None:
    module = _module(path, tmp_path)
    args = _args()
    for name, expected in EXPECTED.items():
        fn = getattr(module, name)
        np.testing.assert_allclose(np.asarray(fn(*args)), np.asarray(fn.reference(*args)), rtol=1e-5, atol=1e-5)
        hlo = jax.jit(fn).lower(*args).compile().as_text()
        assert sorted(collective_shapes(hlo)) == sorted(expected), (name, collective_shapes(hlo))


def test_the_converted_sum_has_one_psum_per_axis() -> None:
    text = convert_source(SOURCE, "groups.py", width=None).text
    for name, expected in EXPECTED.items():
        body = text[text.index(f"def {name}("):]
        body = body[:body.index("\n\n\n")] if "\n\n\n" in body else body
        assert body.count("mr.psum(") == len(expected), (name, body)
