"""Static bool flags whose values change a @mesh function's results (HF's ``output_attentions``): where one
program cannot serve every value, the function is rewritten once per combination of its flags' values, each
version registered with ``@f.variant`` and ``flags={...}``, and the runtime runs the version for the call's
values; any other value is refused at the call, naming the flag (soundness case
``flags_threaded_through_helpers`` compares the numbers)."""

from __future__ import annotations

import textwrap

import jax.numpy as jnp
import numpy as np
import pytest

from meshify import mesh  # noqa: F401  (the source below is executed by the decorator path)
from meshify.errors import CallError, MeshifyError
from meshify.rewrite import convert_source
from meshify.rewrite._context import parse_context
from meshify.rewrite._driver import flag_patterns, mesh_functions, static_flags

SOURCE = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp

    from meshify import Tensor, mesh


    def layer(x, w, output_attentions=False):
        a = jax.nn.softmax(x @ w, axis=-1)
        return (a, jnp.tanh(a)) if output_attentions else (a,)


    @mesh(batch=2, model=4, rules={"f": "model"})
    def f(x: Tensor["batch", "d"], w: Tensor["d", "f"], output_attentions: bool = False, scale=1.0):
        return layer(x * scale, w, output_attentions)
''')


def test_flags_are_the_bool_statics_with_their_defaults_first() -> None:
    ctx = parse_context(SOURCE, "flags.py")
    fn = next(fn for fn, _ in mesh_functions(ctx))
    assert static_flags(ctx, fn) == {"output_attentions": False}
    assert flag_patterns({"a": True, "b": False}) == [{"a": True, "b": False}, {"a": False, "b": False},
                                                      {"a": False, "b": True}, {"a": True, "b": True}]


def test_the_converted_file_has_a_version_per_value() -> None:
    text = convert_source(SOURCE, "flags.py").text
    assert text.count('flags={"output_attentions": False}') == 1
    assert text.count('flags={"output_attentions": True}') == 1
    assert "@f.variant" in text and "# meshify: f() when output_attentions=True" in text


def test_a_call_runs_its_version_and_refuses_other_values(tmp_path, monkeypatch) -> None:
    path = tmp_path / "flags_mod.py"
    path.write_text(SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import flags_mod

    x, w = np.ones((4, 8), np.float32), np.ones((8, 16), np.float32) / 8
    assert len(flags_mod.f(x, w)) == 1
    out = flags_mod.f(x, w, True)
    assert len(out) == 2 and np.allclose(out[1], flags_mod.f.reference(x, w, True)[1])
    with pytest.raises(CallError, match="output_attentions=1: meshify rewrote this function once per value"):
        flags_mod.f(x, w, 1)
    assert np.allclose(flags_mod.f(x, w, False, 2.0)[0], flags_mod.f.reference(x, w, False, 2.0)[0])
    assert isinstance(jnp.zeros(()), object)


def test_a_function_whose_error_does_not_depend_on_its_flags_keeps_its_error() -> None:
    source = SOURCE.replace("return layer(x * scale, w, output_attentions)", "return jnp.fft.fft(x @ w, axis=1).real")
    with pytest.raises(MeshifyError, match="along 'f', which is split"):
        convert_source(source, "flags.py")


def test_jit_above_mesh_on_a_function_with_flag_versions_is_refused_at_the_decorator() -> None:
    source = SOURCE.replace('@mesh(batch=2, model=4, rules={"f": "model"})',
                            '@jax.jit\n@mesh(batch=2, model=4, rules={"f": "model"})')
    with pytest.raises(MeshifyError, match="above @mesh.*whose results change with its flags output_attentions"):
        convert_source(source, "flags.py")
