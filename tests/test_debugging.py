"""``jax.debug.print`` inside a ``@mesh`` function prints what one device prints: the same text, once (each value
made whole first, printed by the first device of the mesh alone), through the decorator and a converted file."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import jax
import numpy as np

from meshify.rewrite import convert_source

SOURCE = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp

    from meshify import Tensor, mesh


    @mesh(batch=2, model=4, rules={"d_ff": "model"})
    def f(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"]):
        h = x @ w
        jax.debug.print("sum {s} row {r}", s=h.sum(), r=h[1])
        jax.debug.print("partial {}", (x * 2.0).sum(axis=0))
        return h
''')


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _printed(capfd, run) -> list[str]:
    capfd.readouterr()
    jax.block_until_ready(run())
    jax.effects_barrier()
    return [line for line in capfd.readouterr().out.splitlines() if line.startswith(("sum", "partial"))]


def test_debug_print_prints_once_what_one_device_prints(tmp_path: Path, capfd) -> None:
    original = tmp_path / "dbg_print_mod.py"
    original.write_text(SOURCE)
    converted = tmp_path / "dbg_print_mod_sharded.py"
    converted.write_text(convert_source(SOURCE, str(original)).text)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    module = _load(original, "dbg_print_mod")
    want = _printed(capfd, lambda: jax.jit(module.f.reference)(x, w))
    assert len(want) == 2, want
    for fn in (module.f, _load(converted, "dbg_print_mod_sharded").f):
        got = _printed(capfd, lambda fn=fn: fn(x, w))
        assert len(got) == 2, got  # once, not once per device
        for g, e in zip(got, want):  # the same text, up to the last digits of float sums
            assert g.split()[0] == e.split()[0]
            g_numbers = [float(t) for t in g.replace("[", " ").replace("]", " ").split()[1:] if t[0] in "-0123456789"]
            e_numbers = [float(t) for t in e.replace("[", " ").replace("]", " ").split()[1:] if t[0] in "-0123456789"]
            np.testing.assert_allclose(g_numbers, e_numbers, rtol=1e-4, atol=1e-4)
