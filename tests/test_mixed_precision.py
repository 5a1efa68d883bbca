"""Mixed precision (issue #15): bfloat16 compute; partial sums accumulate in float32 by default (as
``jnp.sum`` and ``x @ w`` do on one device), in bfloat16 with ``@mesh(reduce_dtype="bfloat16")``
(half the bytes); ``explain`` shows each collective's dtype and counts its bytes so."""

from __future__ import annotations

import importlib.util
import re
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from meshify.errors import AnnotationError
from meshify.explain import explain_source
from meshify.rewrite import convert_source

SOURCE = '''\
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(model=4, rules={{"d_ff": "model"}}{extra})
def mlp(x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"], w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
    h = jax.nn.relu(x.astype(jnp.bfloat16) @ w1.astype(jnp.bfloat16))
    return (h @ w2.astype(jnp.bfloat16)).astype(jnp.float32)
'''


def _load(tmp_path, extra: str):
    name = f"mixed_{abs(hash(extra))}"
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCE.format(extra=extra))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _inputs():
    rng = np.random.default_rng(0)
    return (jnp.asarray(rng.standard_normal((8, 16)), jnp.float32),
            jnp.asarray(rng.standard_normal((16, 64)) / 4, jnp.float32),
            jnp.asarray(rng.standard_normal((64, 16)) / 8, jnp.float32))


def _all_reduce_types(fn, *args) -> list[str]:
    """The element types of the program's all-reduces as JAX emits them (XLA:CPU may widen bfloat16
    collectives when it compiles; GPUs and TPUs run them in bfloat16)."""
    text = jax.jit(fn).lower(*args).as_text()
    return re.findall(r'"stablehlo.all_reduce".*?-> tensor<[\dx]*(\w+)>', text, re.S)


@pytest.mark.parametrize("extra, wire", [("", "f32"), (', reduce_dtype="bfloat16"', "bf16")])
def test_bfloat16_partial_sums_cross_the_wire_in_float32_unless_reduce_dtype_says(tmp_path, extra, wire) -> None:
    mod = _load(tmp_path, extra)
    args = _inputs()
    got, want = mod.mlp(*args), mod.mlp.reference(*args)
    assert got.dtype == want.dtype == jnp.float32
    np.testing.assert_allclose(got, want, rtol=0.05, atol=0.05)
    assert _all_reduce_types(mod.mlp, *args) == [wire]
    grads = jax.grad(lambda *a: jnp.sum(mod.mlp(*a) ** 2), argnums=(1, 2))(*args)
    expected = jax.grad(lambda *a: jnp.sum(mod.mlp.reference(*a) ** 2), argnums=(1, 2))(*args)
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g, e, rtol=0.1, atol=0.1)


def test_the_generated_psum_names_the_reduce_dtype() -> None:
    text = convert_source(SOURCE.format(extra=', reduce_dtype="bfloat16"'), "mixed.py", width=None).text
    assert 'reduce_dtype="bfloat16")' in text
    assert "preferred_element_type=mr.sum_dtype(jnp.bfloat16)" in text


def test_explain_counts_float32_accumulation_and_reduce_dtype() -> None:
    sizes = {"batch": 8, "d": 16, "d_ff": 64}
    for extra, per_element, dtype in (("", 4, "float32"), (', reduce_dtype="bfloat16"', 2, "bfloat16")):
        [report] = explain_source(SOURCE.format(extra=extra), "mixed.py", sizes, itemsize=2)
        [psum] = report.collectives
        assert psum.bytes == 8 * 16 * per_element
        assert psum.dtype.startswith(dtype)


def test_an_unknown_reduce_dtype_is_an_error_at_its_place() -> None:
    with pytest.raises(AnnotationError, match="reduce_dtype"):
        convert_source(SOURCE.format(extra=', reduce_dtype="int8"'), "mixed.py")


def test_a_compute_dtype_read_off_a_config_accumulates_in_float32() -> None:
    """``x.astype(cfg.dtype) @ w.astype(cfg.dtype)`` in a helper with NamedTuple parameters: the
    dtype is the config's field, read where the helper's psum casts back (XLA:CPU folds a
    float32->bfloat16->float32 round trip, so only the program's text shows the difference)."""
    from pathlib import Path

    case = Path(__file__).resolve().parent / "soundness" / "bf16_struct_helper_config_dtype.py"
    text = convert_source(case.read_text(), "case.py", width=None).text
    assert "preferred_element_type=mr.sum_dtype(cfg.dtype)), \"model\", like=cfg.dtype)" in text
