"""@mesh on methods: instance, static and class methods, by decorator and in a converted file."""

from __future__ import annotations

import importlib.util
import itertools
import textwrap
from pathlib import Path

import jax
import numpy as np
import pytest

from meshify.errors import AnnotationError, CallError, LayoutError
from meshify.rewrite import convert_source

MODEL = textwrap.dedent('''\
    """A model whose forward pass is a @mesh method."""
    import jax
    import jax.numpy as jnp
    from meshify import Tensor, mesh


    class Model:
        def __init__(self, scale, w):
            self.scale = scale
            self.w = w

        @mesh(batch=2, model=4, rules={"d_ff": "model"})
        def forward(self, x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"],
                    w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "d_model"]:
            h = jax.nn.relu(x @ w1) * self.scale
            return h @ w2

        @mesh(batch=8)
        def project(self, x: Tensor["batch", "d_model"]) -> Tensor["batch", "d_out"]:
            w: Tensor["d_model", "d_out"] = self.w  # an array attribute: a whole copy on every device
            return x @ w

        @staticmethod
        @mesh(batch=8)
        def double(x: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
            return x * 2

        @classmethod
        @mesh(batch=8)
        def total(cls, x: Tensor["batch", "d_model"]) -> Tensor[()]:
            return jnp.sum(x) * cls.SIGN


    Model.SIGN = -1.0
''')

_names = itertools.count()


def _import(path: Path):
    name = f"meshify_test_methods_{next(_names)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _write(tmp_path: Path, text: str, name: str = "model.py") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _inputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 8)).astype(np.float32)
    w1 = rng.standard_normal((8, 16)).astype(np.float32)
    w2 = rng.standard_normal((16, 8)).astype(np.float32)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    return x, w1, w2, w


@pytest.fixture(params=["decorator", "converted"])
def module(request, tmp_path):
    path = _write(tmp_path, MODEL)
    if request.param == "decorator":
        return _import(path)
    converted = _write(tmp_path, convert_source(MODEL, str(path)).text, "model_sharded.py")
    return _import(converted)


def test_instance_methods_match_numpy_and_read_each_instance(module) -> None:
    x, w1, w2, w = _inputs()
    for scale in (1.0, 3.0):  # one program per instance: each reads its own scale
        model = module.Model(scale, w)
        got = np.asarray(model.forward(x, w1, w2))
        np.testing.assert_allclose(got, np.maximum(x @ w1, 0) * scale @ w2, rtol=1e-5, atol=1e-5)
        assert got.shape == (16, 8)
    np.testing.assert_allclose(np.asarray(module.Model(1.0, w).project(x)), x @ w, rtol=1e-5, atol=1e-5)


def test_an_array_attribute_is_read_on_every_call(module) -> None:
    """After ``model.w`` changes (an optimizer step), the next call uses the new weights: arrays
    read off ``self`` are inputs of each call, never constants baked into the first program."""
    x, _, _, w = _inputs()
    model = module.Model(1.0, w)
    np.testing.assert_allclose(np.asarray(model.project(x)), x @ w, rtol=1e-5, atol=1e-5)
    model.w = w * 2.0 - 1.0
    np.testing.assert_allclose(np.asarray(model.project(x)), x @ model.w, rtol=1e-5, atol=1e-5)
    grad = jax.grad(lambda a: module.Model(1.0, a).project(x).sum())(w)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(jax.grad(lambda a: (x @ a).sum())(w)), rtol=1e-5)


def test_an_unhinted_array_attribute_is_refused_at_the_call(module) -> None:
    from meshify.errors import CallError

    x, w1, w2, w = _inputs()
    with pytest.raises(CallError, match=r"(?s)self.scale is an array of shape \(8,\).*fix: name its dims"):
        module.Model(np.ones(8, np.float32), w).forward(x, w1, w2)


def test_static_and_class_methods(module) -> None:
    x = _inputs()[0]
    np.testing.assert_allclose(np.asarray(module.Model.double(x)), 2 * x)
    np.testing.assert_allclose(float(module.Model.total(x)), -float(x.sum()), rtol=1e-5)
    np.testing.assert_allclose(float(module.Model(1.0, None).total(x)), -float(x.sum()), rtol=1e-5)


def test_gradients_through_a_method(module) -> None:
    x, w1, w2, w = _inputs()
    model = module.Model(2.0, w)
    grad = jax.grad(lambda a, b: model.forward(x, a, b).sum(), argnums=(0, 1))(w1, w2)
    want = jax.grad(lambda a, b: (jax.nn.relu(x @ a) * 2.0 @ b).sum(), argnums=(0, 1))(w1, w2)
    for g, e in zip(grad, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-4)


def test_a_bound_method_keeps_reference_place_and_explain(tmp_path) -> None:
    module = _import(_write(tmp_path, MODEL))
    x, w1, w2, w = _inputs()
    model = module.Model(2.0, w)
    np.testing.assert_allclose(np.asarray(model.forward.reference(x, w1, w2)),
                               np.asarray(model.forward(x, w1, w2)), rtol=1e-5, atol=1e-5)
    placed = model.forward.place(x, w1, w2)
    assert placed[0] is model and placed[2].sharding.spec == jax.sharding.PartitionSpec(None, "model")
    assert "psum" in model.forward.explain() or "all-reduce" in model.forward.explain()
    assert "forward" in repr(model.forward)


def test_the_converted_file_imports_meshify_before_the_class_uses_it(tmp_path) -> None:
    path = _write(tmp_path, MODEL)
    text = convert_source(MODEL, str(path)).text
    assert text.index("import meshify.runtime as mr") < text.index("class Model")


def test_imports_at_the_bottom_do_not_move_the_runtime_import_below_its_use(tmp_path) -> None:
    source = MODEL.replace("import jax.numpy as jnp\n", "") + "import jax.numpy as jnp\n"
    text = convert_source(source, str(_write(tmp_path, source))).text
    assert text.index("import meshify.runtime as mr") < text.index("@mr.sharded")


def test_staticmethod_below_mesh_is_refused_with_a_place(tmp_path) -> None:
    source = MODEL.replace("    @staticmethod\n    @mesh(batch=8)\n", "    @mesh(batch=8)\n    @staticmethod\n")
    path = _write(tmp_path, source)
    with pytest.raises(AnnotationError) as convert_error:
        convert_source(source, str(path))
    line = source.splitlines().index("    @staticmethod") + 1
    assert convert_error.value.span.line == line and "put @staticmethod above @mesh" in str(convert_error.value)
    with pytest.raises(AnnotationError) as decorate_error:
        _import(path)
    assert decorate_error.value.span.path == str(path) and "put @staticmethod above @mesh" in str(decorate_error.value)


def test_an_array_attribute_without_dims_names_itself_and_the_fix(tmp_path) -> None:
    source = MODEL.replace('''        w: Tensor["d_model", "d_out"] = self.w  # an array attribute: a whole copy on every device
        return x @ w''', "        return x @ self.w")
    assert source != MODEL
    path = _write(tmp_path, source)
    with pytest.raises(LayoutError) as error:
        convert_source(source, str(path))
    message = str(error.value)
    assert "'self.w'" in message and 'Tensor["d_in", "d_out"] = self.w' in message
    assert error.value.span.line == source.splitlines().index("        return x @ self.w") + 1


def test_an_unhashable_instance_warns_once_that_every_call_compiles_again(tmp_path) -> None:
    source = MODEL.replace("class Model:", "@dataclasses.dataclass(eq=True)\nclass Model:").replace(
        "import jax\n", "import dataclasses\nimport jax\n", 1)
    module = _import(_write(tmp_path, source))
    x, w1, w2, w = _inputs()
    model = module.Model(1.0, w)
    with pytest.warns(RuntimeWarning, match=r"static argument self \(Model\) is unhashable") as caught:
        model.forward(x, w1, w2)
        model.forward(x, w1, w2)
    assert len(caught) == 1 and caught[0].filename == __file__


def test_an_einsum_with_an_unhinted_array_attribute_is_refused_at_the_call(tmp_path) -> None:
    """The einsum's dim of ``self.w`` (unknown dims) is an inferred name that the return hint names
    ``d_out``; reading an array attribute without a hint is refused when the method is called."""
    from meshify.errors import CallError

    source = MODEL.replace('''        w: Tensor["d_model", "d_out"] = self.w  # an array attribute: a whole copy on every device
        return x @ w''', '''        return jnp.einsum("bd,de->be", x, self.w)''')
    assert source != MODEL
    path = _write(tmp_path, source)
    _write(tmp_path, convert_source(source, str(path)).text, "model_sharded.py")
    module = _import(tmp_path / "model_sharded.py")
    x, _, _, w = _inputs()
    with pytest.raises(CallError, match=r"(?s)self.w is an array of shape \(8, 3\).*fix: name its dims"):
        module.Model(1.0, w).project(x)


CALLS_METHODS = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from meshify import Tensor, mesh


    class Model:
        eps = 1e-6

        def norm(self, x):
            return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + self.eps)

        def mlp(self, x, w1, w2):
            return jax.nn.relu(self.norm(x) @ w1) @ w2

        @mesh(batch=2, model=4, rules={"d_ff": "model"})
        def forward(self, x: Tensor["batch", "d"], w1: Tensor["d", "d_ff"],
                    w2: Tensor["d_ff", "d"]) -> Tensor["batch", "d"]:
            return x + self.mlp(x, w1, w2)


    class Doubled(Model):
        def norm(self, x):
            return x * 2.0
''')


@pytest.fixture(params=["decorator", "converted"])
def calls_methods(request, tmp_path):
    path = _write(tmp_path, CALLS_METHODS)
    if request.param == "decorator":
        return _import(path)
    return _import(_write(tmp_path, convert_source(CALLS_METHODS, str(path)).text, "model_sharded.py"))


def test_a_method_calling_methods_of_its_class_runs_their_versions(calls_methods) -> None:
    """``self.mlp(...)`` and, inside it, ``self.norm(x)``: each a version after the class, its psum spelled."""
    x, w1, w2, _ = _inputs()
    got = calls_methods.Model().forward(x, w1, w2)
    np.testing.assert_allclose(np.asarray(got), np.asarray(calls_methods.Model().forward.reference(x, w1, w2)),
                               rtol=1e-5, atol=1e-5)


def test_a_subclass_overriding_the_called_method_is_refused_at_the_call(calls_methods) -> None:
    """``Doubled.norm`` is code the rewrite of ``Model.forward`` did not read: the call says so rather than run
    ``Model.norm``; likewise an instance attribute named ``norm``."""
    x, w1, w2, _ = _inputs()
    with pytest.raises(CallError, match=r"self\.norm\(\.\.\.\) was rewritten as Model\.norm, but on this Doubled"):
        calls_methods.Doubled().forward(x, w1, w2)
    model = calls_methods.Model()
    model.norm = lambda x: x
    with pytest.raises(CallError, match="an attribute of the instance"):
        model.forward(x, w1, w2)


def test_the_versions_of_methods_follow_their_class() -> None:
    text = convert_source(CALLS_METHODS, "model.py").text
    assert 'mr.psum(mlp__v1(mr.method_receiver(self, Model, "mlp"), x, w1, w2), "model")' in text, text
    assert "# meshify: Model.mlp specialised for its callers' layouts:" in text, text
    assert text.index("class Doubled") > text.index("def norm__v1(self, x):") > text.index("class Model"), text
