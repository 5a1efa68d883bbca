"""Folds of partial sums over lists of each call's length (``sum(h @ w for h in hs)``, ``functools.reduce(operator.add,
[x @ w for w in ws])``, with a start, ``acc = 0`` then ``acc = acc + h @ w`` in a loop, ``jnp.sum(jnp.stack([h @ w for h
in hs]), 0)``): one psum after the fold, so the compiled program all-reduces one array of the
result's block, not one per item (XLA would combine those into one tuple all-reduce of as many arrays: the bytes
tell them apart).  Numbers: tests/soundness/sum_of_partial_sums_over_a_list*.py, functools_reduce_over_lists.py."""

from __future__ import annotations

import importlib.util
import sys

import jax
import numpy as np
import pytest

from meshify.rewrite import convert_source
from tests.cases.harness import collective_shapes

SOURCE = '''\
import functools
import operator

import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh({MESH}, rules={{"f": "model"}})
def gen(hs: list[Tensor["batch", "f"]], w: Tensor["f", "d"], x: Tensor["batch", "f"]) -> Tensor["batch", "d"]:
    return sum(h @ w for h in hs)


@mesh({MESH}, rules={{"f": "model"}})
def zipped(hs: list[Tensor["batch", "f"]], ws: list[Tensor["f", "d"]], x: Tensor["batch", "f"]) -> Tensor["batch", "d"]:
    return sum([h @ w for h, w in zip(hs, ws)], x @ ws[0])


@mesh({MESH}, rules={{"f": "model"}})
def started(hs: list[Tensor["batch", "f"]], w: Tensor["f", "d"], y: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return sum((h @ w for h in hs), start=y)


@mesh({MESH}, rules={{"f": "model"}})
def folded(hs: list[Tensor["batch", "f"]], ws: list[Tensor["f", "d"]], x: Tensor["batch", "f"]) -> Tensor["batch", "d"]:
    return functools.reduce(lambda a, b: a + b, [x @ w for w in ws])


@mesh({MESH}, rules={{"f": "model"}})
def folded_from(hs: list[Tensor["batch", "f"]], ws: list[Tensor["f", "d"]], y: Tensor["batch", "d"]
                ) -> Tensor["batch", "d"]:
    return functools.reduce(operator.add, (h @ w for h, w in zip(hs, ws)), y)


@mesh({MESH}, rules={{"f": "model"}})
def appended(hs: list[Tensor["batch", "f"]], ws: list[Tensor["f", "d"]], x: Tensor["batch", "f"], n: int = 3
             ) -> Tensor["batch", "d"]:
    terms = []
    for i in range(n):
        terms.append(jnp.sin(x * (i + 1)))
    return sum(t @ w for t, w in zip(terms, ws))


@mesh({MESH}, rules={{"f": "model"}})
def looped(hs: list[Tensor["batch", "f"]], w: Tensor["f", "d"], x: Tensor["batch", "f"]) -> Tensor["batch", "d"]:
    acc = 0
    for h in hs:
        acc = acc + h @ w
    return acc


@mesh({MESH}, rules={{"f": "model"}})
def stacked(hs: list[Tensor["batch", "f"]], w: Tensor["f", "d"], x: Tensor["batch", "f"]) -> Tensor["batch", "d"]:
    return jnp.sum(jnp.stack([h @ w for h in hs]), 0)


@mesh({MESH}, rules={{"f": "model"}})
def stacked_zipped(hs: list[Tensor["batch", "f"]], ws: list[Tensor["f", "d"]], x: Tensor["batch", "f"]
                   ) -> Tensor["batch", "d"]:
    return jnp.stack([h @ w for h, w in zip(hs, ws)], axis=-1).mean(-1)
'''

MESHES = {"2x4": ("batch=2, model=4", 2), "8": ("model=8", 1)}
FUNCTIONS = ("gen", "zipped", "started", "folded", "folded_from", "appended", "looped", "stacked", "stacked_zipped")


def _module(mesh: str, path: str, tmp_path):
    text = SOURCE.format(MESH=MESHES[mesh][0])
    original = tmp_path / f"folds_{mesh.replace('x', '_')}.py"
    original.write_text(text)
    if path == "converted":
        text = convert_source(text, str(original)).text
    file = tmp_path / f"{original.stem}_{path}.py"
    file.write_text(text)
    spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[file.stem] = module
    spec.loader.exec_module(module)
    return module


def _args(name: str):
    rng = np.random.default_rng(3)
    hs = [rng.standard_normal((4, 16)).astype(np.float32) for _ in range(3)]
    ws = [rng.standard_normal((16, 8)).astype(np.float32) for _ in range(3)]
    third = rng.standard_normal((4, 8)).astype(np.float32) if name in ("started", "folded_from") else hs[0]
    return hs, ws[0] if name in ("gen", "started", "looped", "stacked") else ws, third


@pytest.mark.parametrize("path", ["decorator", "converted"])
@pytest.mark.parametrize("mesh", list(MESHES))
def test_a_fold_of_partial_sums_all_reduces_once(mesh: str, path: str, tmp_path) -> None:
    module = _module(mesh, path, tmp_path)
    rows = 4 // MESHES[mesh][1]
    for name in FUNCTIONS:
        fn = getattr(module, name)
        args = _args(name)
        np.testing.assert_allclose(np.asarray(fn(*args)), np.asarray(fn.reference(*args)), rtol=1e-5, atol=1e-4)
        hlo = jax.jit(fn).lower(*args).compile().as_text()
        assert collective_shapes(hlo) == [("all-reduce", f"f32[{rows},8]")], (name, collective_shapes(hlo))
