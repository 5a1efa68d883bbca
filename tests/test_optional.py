"""Optional arrays of a @mesh function (issue #14): ``bias: Tensor["d"] | None = None``.

None vs an array is decided per call: the function is rewritten once per combination of its
optional arrays being None, ``if bias is None:`` is taken statically in each version, and the
runtime runs the version for the call's None-ness.  Both paths (decorator and converted),
forward and gradients, against ``.reference``.
"""

from __future__ import annotations

import importlib.util
import itertools
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from meshify.errors import AnnotationError, MeshifyError
from meshify.rewrite import convert_source

SOURCE = textwrap.dedent('''\
    from typing import Annotated, Optional, Union

    import jax
    import jax.numpy as jnp

    from meshify import Tensor, mesh


    @mesh(batch=2, model=4, rules={"d": "model"})
    def pipe(x: Tensor["batch", "d"], bias: Tensor["d"] | None = None) -> Tensor["batch", "d"]:
        if bias is None:
            return jnp.tanh(x)
        return jnp.tanh(x + bias)


    @mesh(batch=2, model=4, rules={"f": "model"})
    def dense(x: Tensor["batch", "d"], w: Tensor["d", "f"],
              bias: Optional[Annotated[jax.Array, "f"]] = None,
              scale: Union[Annotated[jax.Array, "batch", "f"], None] = None) -> Tensor["batch", "d"]:
        h = x @ w
        if bias is not None:
            h = h + bias
        h = jax.nn.relu(h)
        if scale is not None:
            h = h * scale
        return h @ w.T


    @mesh(batch=2, model=4, rules={"d": "model"})
    def masked(x: Tensor["batch", "d"], mask: None | Tensor["batch", "d"] = None) -> Tensor["batch"]:
        logits = x if mask is None else jnp.where(mask > 0, x, -1e9)
        return jax.nn.logsumexp(logits, axis=-1)
''')

_names = itertools.count()


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"meshify_test_optional_{next(_names)}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def modules(tmp_path_factory) -> dict[str, object]:
    """The case file imported as it is (decorator path) and converted (converted path)."""
    folder = tmp_path_factory.mktemp("optional")
    (folder / "model.py").write_text(SOURCE)
    (folder / "model_sharded.py").write_text(convert_source(SOURCE, str(folder / "model.py")).text)
    return {"decorator": _load(folder / "model.py"), "converted": _load(folder / "model_sharded.py")}


def _rng_inputs():
    rng = np.random.default_rng(14)
    return {name: rng.standard_normal(shape).astype(np.float32)
            for name, shape in {"x": (4, 8), "w": (8, 12), "bias": (12,), "scale": (4, 12), "b8": (8,),
                                "mask": (4, 8)}.items()}


CALLS = {
    "pipe without bias": ("pipe", lambda a: ((a["x"],), {})),
    "pipe with bias": ("pipe", lambda a: ((a["x"], a["b8"]), {})),
    "pipe bias=None": ("pipe", lambda a: ((a["x"],), {"bias": None})),
    "dense neither": ("dense", lambda a: ((a["x"], a["w"]), {})),
    "dense bias": ("dense", lambda a: ((a["x"], a["w"], a["bias"]), {})),
    "dense scale": ("dense", lambda a: ((a["x"], a["w"]), {"scale": a["scale"]})),
    "dense both": ("dense", lambda a: ((a["x"], a["w"], a["bias"], a["scale"]), {})),
    "masked without": ("masked", lambda a: ((a["x"],), {})),
    "masked with": ("masked", lambda a: ((a["x"], a["mask"]), {})),
}


@pytest.mark.parametrize("path", ["decorator", "converted"])
@pytest.mark.parametrize("call", sorted(CALLS))
def test_each_none_pattern_matches_the_reference(modules, path, call) -> None:
    name, make = CALLS[call]
    fn = getattr(modules[path], name)
    reference = getattr(modules["decorator"], name).reference
    args, kwargs = make(_rng_inputs())
    np.testing.assert_allclose(np.asarray(fn(*args, **kwargs)), np.asarray(reference(*args, **kwargs)),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("path", ["decorator", "converted"])
@pytest.mark.parametrize("call", ["pipe with bias", "dense both", "dense bias", "dense neither"])
def test_gradients_match_the_reference(modules, path, call) -> None:
    name, make = CALLS[call]
    fn = getattr(modules[path], name)
    reference = getattr(modules["decorator"], name).reference
    args, kwargs = make(_rng_inputs())
    positions = tuple(range(len(args)))

    def grads(f):
        return jax.grad(lambda *a: jnp.sum(f(*a, **kwargs)), argnums=positions)(*args)

    for got, want in zip(grads(fn), grads(reference)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-5)


def test_the_call_runs_the_version_for_its_none_ness(modules) -> None:
    """Each version is a program of its own: given arrays are inputs of the program (placed in their
    sharding), a None one is not; under jax.jit the choice is made at trace time too."""
    program = modules["converted"].dense
    a = _rng_inputs()
    assert set(program.shardings) == {"x", "w", "bias", "scale"}
    placed = program.place(a["x"], a["w"], None, a["scale"])
    assert placed[2] is None and placed[3].sharding.spec == jax.sharding.PartitionSpec("batch", "model")
    jitted = jax.jit(lambda x, w, b: program(x, w, b))
    np.testing.assert_allclose(np.asarray(jitted(a["x"], a["w"], a["bias"])),
                               np.asarray(program.reference(a["x"], a["w"], a["bias"])), rtol=1e-5, atol=1e-5)


def test_the_converted_file_names_each_version() -> None:
    text = convert_source(SOURCE, "model.py").text
    assert text.count("@dense.variant") == 3 and text.count("def dense(") == 4
    assert "# meshify: dense() when bias, scale are None" in text
    assert "# meshify: pipe() when bias is None" in text
    assert "'bias is None' is True in this version" in text and "'bias is None' is False in this version" in text


def test_an_array_passed_where_no_hint_is_optional_is_still_refused(modules) -> None:
    """Only a hinted optional parameter is an array or None: a plain ``b=None`` stays static."""
    source = SOURCE.replace('bias: Tensor["d"] | None = None', "bias=None")
    folder = Path(modules["decorator"].__file__).parent
    (folder / "plain.py").write_text(source)
    plain = _load(folder / "plain.py")
    a = _rng_inputs()
    np.testing.assert_allclose(np.asarray(plain.pipe(a["x"])), np.tanh(a["x"]), rtol=1e-5)
    with pytest.raises(MeshifyError, match="has no Tensor hint"):
        plain.pipe(a["x"], a["b8"])


def test_more_optional_arrays_than_the_limit_is_a_positioned_error() -> None:
    source = textwrap.dedent('''\
        from meshify import Tensor, mesh


        @mesh(batch=8)
        def f(x: Tensor["batch"], a: Tensor["batch"] | None = None, b: Tensor["batch"] | None = None,
              c: Tensor["batch"] | None = None, d: Tensor["batch"] | None = None) -> Tensor["batch"]:
            return x
    ''')
    with pytest.raises(AnnotationError) as error:
        convert_source(source, "many.py")
    message = str(error.value)
    assert "many.py:6:" in message and "more than 3 optional arrays (a, b, c, d)" in message
    assert "fix: make 'd' required" in message


def test_a_decorator_above_mesh_with_optional_arrays_is_refused() -> None:
    source = textwrap.dedent('''\
        import functools
        from meshify import Tensor, mesh


        @functools.lru_cache
        @mesh(batch=8)
        def f(x: Tensor["batch"], a: Tensor["batch"] | None = None) -> Tensor["batch"]:
            return x if a is None else x + a
    ''')
    with pytest.raises(MeshifyError, match=r"above @mesh\(...\).*optional arrays") as error:
        convert_source(source, "above.py")
    assert "above.py:5:" in str(error.value)


def test_the_hint_evaluates_without_postponed_annotations() -> None:
    from meshify import Tensor

    hint = Tensor["d"] | None
    assert hint.optional and hint.dims == ("d",) and repr(hint) == "Tensor['d'] | None"
    assert (None | Tensor["d"]) == hint


FIELDS = textwrap.dedent('''\
    from typing import NamedTuple, Optional

    from meshify import Tensor, mesh


    class Linear(NamedTuple):
        w: Tensor["d", "d"]
        b: Optional[Tensor["d"]] = None


    class Attn(NamedTuple):
        q: Linear
        k: Linear


    @mesh(data=2, model=4, rules={"batch": "data", "d": "model"})
    def f(p: Attn, x: Tensor["batch", "d"]) -> Tensor["batch", "d"]:
        q = x @ p.q.w if p.q.b is None else x @ p.q.w + p.q.b
        k = x @ p.k.w if p.k.b is None else x @ p.k.w + p.k.b
        return q * k
''')


@pytest.mark.parametrize("path", ["decorator", "converted"])
def test_optional_fields_are_one_choice_per_class_and_a_call_mixing_them_is_refused(path: str, tmp_path) -> None:
    """Every ``Linear.b`` of a call is None or none is (one version each); a call with both is a CallError at the
    parameter naming the field, never a wrong version."""
    from meshify.errors import CallError

    (tmp_path / "fields.py").write_text(FIELDS)
    if path == "converted":
        (tmp_path / "fields_sharded.py").write_text(convert_source(FIELDS, str(tmp_path / "fields.py")).text)
    mod = _load(tmp_path / ("fields.py" if path == "decorator" else "fields_sharded.py"))
    rng = np.random.default_rng(5)
    w, b, x = (jnp.asarray(rng.standard_normal(s).astype(np.float32)) for s in ((8, 8), (8,), (4, 8)))
    for p in (mod.Attn(mod.Linear(w, b), mod.Linear(w * 2, b * 3)), mod.Attn(mod.Linear(w), mod.Linear(w * 2))):
        np.testing.assert_allclose(mod.f(p, x), mod.f.reference(p, x), rtol=1e-5, atol=1e-5)
    with pytest.raises(CallError, match="Linear.b is None in some places of argument 'p' and an array in others"
                       ) as raised:
        mod.f(mod.Attn(mod.Linear(w, b), mod.Linear(w)), x)
    # (at the parameter: in the file the call runs, the converted one on that path)
    assert (":17:7:" if path == "decorator" else ":38:7:") in str(raised.value), str(raised.value)
    assert "or None for every one" in str(raised.value)
