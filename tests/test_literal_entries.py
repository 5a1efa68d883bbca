"""An array of a literal shape lined up with a split dim (``x + jnp.arange(4.0)``, d split over 4
devices): one entry per device would broadcast against any block, so the sharded program must not run
where the single-device one fails to broadcast.  ``mr.entries`` checks the entries against the call's
dim sizes while tracing; a size ``@mesh(dims=...)`` declares makes the check unneeded (not written)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest

from meshify.errors import CallError
from meshify.rewrite import convert_source

SOURCE = '''\
import jax.numpy as jnp
from meshify import Tensor, mesh


def shift(x, b=jnp.arange(4.0)):
    return x + b


@mesh(batch=2, model=4, rules={"d": "model"})
def f(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x + jnp.arange(N.0)


@mesh(batch=2, model=4, rules={"d": "model"})
def g(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return shift(x)


@mesh(batch=2, model=4, rules={"d": "model"}, dims={"d": 4})
def declared(x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
    return x + jnp.arange(4.0)
'''


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", ["decorator", "converted"])
def test_a_block_of_one_entry_is_refused_where_one_device_fails_to_broadcast(path: str, tmp_path: Path) -> None:
    source = tmp_path / f"entries_{path}.py"
    source.write_text(SOURCE.replace("N.0", "4.0"))
    if path == "converted":
        converted = tmp_path / f"entries_{path}_sharded.py"
        converted.write_text(convert_source(source.read_text(), str(source)).text)
        assert 'mr.entries(mr.local_block(jnp.arange(4.0), axis=0, axis_name="model"), ("d",), (4,), like=x)' \
            in converted.read_text()
        source = converted
    module = _load(source)
    x = jnp.asarray(np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32))
    for fn in (module.f, module.g):
        with pytest.raises(ValueError, match="Incompatible shapes"):
            fn.reference(x)  # the single-device program
        with pytest.raises(CallError, match="4 entries along dim 'd', whose size is 8"):
            fn(x)
    small = jnp.ones((4, 4), jnp.float32)  # d of size 4: four entries are right
    np.testing.assert_allclose(module.f(small), module.f.reference(small))
    np.testing.assert_allclose(module.declared(small), module.declared.reference(small))


def test_the_check_runs_for_each_size_and_is_not_written_where_the_size_is_declared(tmp_path: Path) -> None:
    source = tmp_path / "entries_sizes.py"
    source.write_text(SOURCE.replace("N.0", "8.0"))
    code = convert_source(source.read_text(), str(source)).text
    assert "return x + mr.entries(mr.local_block(jnp.arange(8.0)" in code
    assert "return x + mr.local_block(jnp.arange(4.0), axis=0" in code  # declared: d is 4
    module = _load(source)
    np.testing.assert_allclose(module.f(jnp.ones((4, 8))), module.f.reference(jnp.ones((4, 8))))
    with pytest.raises(CallError, match="8 entries along dim 'd', whose size is 4"):
        module.f(jnp.ones((4, 4)))  # a new size traces again, and is checked again


MADE = '''\
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"heads": "model"})
def hinted(x: Tensor["batch", "seq", "d"]):
    B, L, D = x.shape
    h: Tensor["batch", "seq", "heads", "hd"] = x.reshape(B, L, 4, D // 4)
    return h * jnp.ones((1, 1, 8, 1))


@mesh(batch=2, model=4, rules={"d": "model"})
def inferred(x: Tensor["batch", "seq", "d"]):
    B, L, D = x.shape
    return x.reshape(B, L, 4, D // 4) * jnp.ones((1, 1, 8, 1))
'''


@pytest.mark.parametrize("path", ["decorator", "converted"])
def test_lined_up_with_a_dim_the_function_makes_it_is_refused(path: str, tmp_path: Path) -> None:
    """A dim the function makes itself (a hinted reshape's 'heads', an inferred one) has no size among the
    call's arguments: the 8 entries against 4 heads broadcast block by block (2 against 1), so the sharded
    program returned an [4, 3, 8, 4] array where one device fails.  Refused at the call instead, the block
    checked against the block of the array it meets."""
    source = tmp_path / f"made_{path}.py"
    source.write_text(MADE)
    if path == "converted":
        converted = tmp_path / f"made_{path}_sharded.py"
        converted.write_text(convert_source(source.read_text(), str(source)).text)
        source = converted
    module = _load(source)
    x = jnp.ones((4, 3, 16), jnp.float32)
    for fn, dim in ((module.hinted, "'heads'"), (module.inferred, "'d_0?'")):
        with pytest.raises((TypeError, ValueError), match="broadcast"):
            fn.reference(x)
        # (checked against the block of the array it meets where that is a name; else refused, no size to check)
        with pytest.raises(CallError, match=re.escape(f"8 entries along dim {dim}, ") +
                           "(which has 4 in the array it meets|split over 4 devices)"):
            fn(x)
