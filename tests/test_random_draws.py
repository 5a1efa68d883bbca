"""Random draws made blockwise (issue #15): each device computes only its block of a
``jax.random`` draw, and the blocks are bit-identical to the single-device draw.

``mr.local_draw`` reproduces only JAX's partitionable threefry *bits* (the positions they are
hashed at and how the two 32-bit halves are finished); JAX's own samplers turn them into values.
So the bits are checked against ``jax.random.bits`` for every width, and every sampler meshify
draws blockwise against its single-device draw for each float dtype and several shapes (odd
sizes included): a JAX upgrade that changes either fails here.  Then the rewrite end to end: a
dropout through ``@mesh`` and through a converted file, forward and gradient, against
``.reference``.
"""

from __future__ import annotations

import importlib.util
import itertools
import textwrap

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P
from typer.testing import CliRunner

from meshify import Tensor, mesh
from meshify.cli import app
from meshify.runtime._random import _block_impl, _mul_wide, _positions, local_draw

MESH = jax.make_mesh((2, 4), ("batch", "model"), axis_types=(jax.sharding.AxisType.Explicit,) * 2)

#: (global shape, spec): blocks of odd sizes, a dim split over both axes, a split last dim.
LAYOUTS = [((6, 4, 3), P("batch", "model", None)),
           ((3, 16, 5), P(None, ("batch", "model"), None)),
           ((2, 7, 4), P("batch", None, "model"))]

def _bits_of(x) -> np.ndarray:
    """The raw bytes of an array (bool, int or float), so that equality means bit-identity."""
    return np.ascontiguousarray(np.asarray(x)).view(np.uint8)


def _assert_identical(got, want) -> None:
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    np.testing.assert_array_equal(_bits_of(got), _bits_of(want))


def _sharded(draw, spec):
    """``draw(key)`` run blockwise under shard_map on the 2x4 mesh, gathered to a global array."""
    return jax.jit(jax.shard_map(draw, mesh=MESH, in_specs=P(), out_specs=spec))


# -- the bits ----------------------------------------------------------------------------------------


def _block_keys(key, shape, factors):
    """(block slices, block key) for every block of ``shape`` split ``factors`` ways."""
    data = jax.random.key_data(key)
    local = [s // f for s, f in zip(shape, factors)]
    for index in itertools.product(*(range(f) for f in factors)):
        block = jnp.concatenate([data, jnp.asarray(index, jnp.uint32)])
        slices = tuple(slice(i * n, (i + 1) * n) for i, n in zip(index, local))
        yield slices, jax.random.wrap_key_data(block, impl=_block_impl(factors))


@pytest.mark.parametrize("width", [8, 16, 32])
@pytest.mark.parametrize("shape,factors", [((4, 6), (2, 3)), ((3, 5, 2), (1, 5, 2)), ((7,), (7,)), ((9, 1), (3, 1))])
def test_block_bits_are_the_blocks_of_jax_random_bits(width, shape, factors) -> None:
    key = jax.random.key(11)
    dtype = jnp.dtype(f"uint{width}")
    whole = jax.random.bits(key, shape, dtype)
    pair = jax.random.bits(key, (2, *shape), dtype)  # bernoulli(mode="high") asks for (2, *shape)
    for slices, block_key in _block_keys(key, shape, factors):
        local = whole[slices].shape
        _assert_identical(jax.random.bits(block_key, local, dtype), whole[slices])
        _assert_identical(jax.random.bits(block_key, (2, *local), dtype), pair[(slice(None), *slices)])


def test_block_bits_of_64_bits() -> None:
    with jax.enable_x64(True):
        key = jax.random.key(5)
        whole = jax.random.bits(key, (4, 6), jnp.uint64)
        for slices, block_key in _block_keys(key, (4, 6), (2, 2)):
            _assert_identical(jax.random.bits(block_key, whole[slices].shape, jnp.uint64), whole[slices])


def test_split_and_fold_in_of_a_block_key_act_on_the_threefry_key() -> None:
    key = jax.random.key(3)
    for slices, block_key in _block_keys(key, (4, 6), (2, 3)):
        for derived, plain in [(jax.random.split(block_key)[1], jax.random.split(key)[1]),
                               (jax.random.fold_in(block_key, 7), jax.random.fold_in(key, 7))]:
            _assert_identical(jax.random.bits(derived, (2, 2)), jax.random.bits(plain, (4, 6))[slices])


def test_positions_past_32_bits() -> None:
    shape, global_shape = (2, 3, 5), (7, 3 * 2 ** 20, 2 ** 13 + 5)
    starts = [5, 3 * 2 ** 20 - 3, 2 ** 13]
    hi, lo = jax.jit(lambda: _positions([jnp.uint32(s) for s in starts], shape, global_shape))()
    index = np.stack(np.meshgrid(*[np.arange(n, dtype=np.uint64) + np.uint64(s) for n, s in zip(shape, starts)],
                                 indexing="ij"))
    strides = [np.uint64(np.prod(global_shape[d + 1:], dtype=np.uint64)) for d in range(3)]
    want = sum(index[d] * strides[d] for d in range(3))
    assert want.max() > 2 ** 32
    got = (np.asarray(hi).astype(np.uint64) << np.uint64(32)) | np.asarray(lo).astype(np.uint64)
    np.testing.assert_array_equal(got, want)


def test_wide_multiplication() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2 ** 32, 1000, dtype=np.uint64)
    for c in [1, 3, 2 ** 16 + 1, 2 ** 32 - 1, 2 ** 32 + 7, 123456789012345, 2 ** 63 + 2 ** 40 + 99]:
        hi, lo = _mul_wide(jnp.asarray(x.astype(np.uint32)), c)
        got = (np.asarray(hi).astype(np.uint64) << np.uint64(32)) | np.asarray(lo).astype(np.uint64)
        want = (x.astype(object) * c) % 2 ** 64
        np.testing.assert_array_equal(got, want.astype(np.uint64))


# -- every sampler, blockwise under shard_map --------------------------------------------------------

FLOATS = [jnp.float32, jnp.bfloat16, jnp.float16]

#: name -> draw(key, shape, dtype) as the user writes it (the sampler, then its arguments).
SAMPLERS = {
    "normal": lambda dt: (jax.random.normal, lambda key, shape: (key, shape, dt)),
    "uniform": lambda dt: (jax.random.uniform, lambda key, shape: (key, shape, dt, -2.0, 3.0)),
    "truncated_normal": lambda dt: (jax.random.truncated_normal, lambda key, shape: (key, -1.5, 2.0, shape, dt)),
    "bernoulli": lambda dt: (jax.random.bernoulli, lambda key, shape: (key, jnp.asarray(0.3, dt), shape)),
    "bernoulli_high": lambda dt: (jax.random.bernoulli,
                                  lambda key, shape: (key, jnp.asarray(0.3, dt), shape, "high")),
    "gumbel": lambda dt: (jax.random.gumbel, lambda key, shape: (key, shape, dt)),
    "gumbel_high": lambda dt: (jax.random.gumbel, lambda key, shape: (key, shape, dt, "high")),
    "laplace": lambda dt: (jax.random.laplace, lambda key, shape: (key, shape, dt)),
    "exponential": lambda dt: (jax.random.exponential, lambda key, shape: (key, shape, dt)),
    "rademacher": lambda dt: (jax.random.rademacher, lambda key, shape: (key, shape, dt)),
}
INTS = {
    "randint": lambda dt: (jax.random.randint, lambda key, shape: (key, shape, -5, 1000, dt)),
    "rademacher": lambda dt: (jax.random.rademacher, lambda key, shape: (key, shape, dt)),
}


def _check_sampler(sampler, args, layouts=LAYOUTS, seed=0) -> None:
    """Each layout's blockwise draw (one shard_map program for all) against the global draw (one
    jitted program: under jit as the sharded one is, since constant folding of a sampler's
    parameters, truncated_normal's erf(lower), can differ by an ulp from an eager call)."""
    keys = [jax.random.key(seed + i) for i in range(len(layouts))]
    specs = tuple(spec for _, spec in layouts)

    def blockwise(keys):
        return tuple(local_draw(sampler, spec, *args(k, shape)) for k, (shape, spec) in zip(keys, layouts))

    got = jax.jit(jax.shard_map(blockwise, mesh=MESH, in_specs=P(), out_specs=specs))(keys)
    want = jax.jit(lambda keys: tuple(sampler(*args(k, shape)) for k, (shape, _) in zip(keys, layouts)))(keys)
    for g, w in zip(got, want):
        _assert_identical(g, w)


@pytest.mark.parametrize("dtype", [pytest.param(d, marks=() if d is FLOATS[0] else pytest.mark.slow) for d in FLOATS],
                         ids=lambda d: jnp.dtype(d).name)
@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_every_sampler_is_bit_identical_blockwise(name, dtype) -> None:
    """(Each sampler in float32 on every run; its other float dtypes in the slow sample.)"""
    sampler, args = SAMPLERS[name](dtype)
    _check_sampler(sampler, args)


def test_gumbel_highest_in_float32() -> None:
    _check_sampler(jax.random.gumbel, lambda key, shape: (key, shape, jnp.float32, "highest"), seed=9)


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.int8, jnp.uint8, jnp.int16], ids=lambda d: jnp.dtype(d).name)
@pytest.mark.parametrize("name", sorted(INTS))
def test_integer_samplers_are_bit_identical_blockwise(name, dtype) -> None:
    sampler, args = INTS[name](dtype)
    if name == "randint" and jnp.dtype(dtype).kind == "u":
        args = (lambda key, shape: (key, shape, 3, 200, dtype))
    _check_sampler(sampler, args, seed=20)


def test_a_raw_uint32_key_and_keywords() -> None:
    raw = jax.random.PRNGKey(4)
    spec = P("batch", "model", None)
    got = _sharded(lambda k: local_draw(jax.random.normal, spec, k, shape=(4, 8, 6), dtype=jnp.bfloat16), spec)(raw)
    _assert_identical(got, jax.jit(lambda k: jax.random.normal(k, (4, 8, 6), jnp.bfloat16))(raw))


def _bits_shapes(fn, *args) -> list[tuple[int, ...]]:
    """The shapes of the random bits ``fn`` draws (``random_bits`` in its jaxpr, nested ones too)."""
    found = []

    def walk(jaxpr):
        for eqn in jaxpr.eqns:
            if eqn.primitive.name == "random_bits":
                found.append(tuple(eqn.outvars[0].aval.shape))
            for sub in jax.extend.core.jaxprs_in_params(eqn.params):
                walk(sub)

    walk(jax.make_jaxpr(fn)(*args).jaxpr)
    return found


def test_each_device_hashes_only_its_block() -> None:
    spec = P("batch", "model", None)
    draw = _sharded(lambda k: local_draw(jax.random.bernoulli, spec, k, 0.9, (4, 8, 6)), spec)
    assert _bits_shapes(draw, jax.random.key(0)) == [(2, 2, 6)]


# -- fallbacks: drawn whole, then sliced --------------------------------------------------------------


def test_without_partitionable_threefry_the_draw_is_whole_and_sliced() -> None:
    spec = P("batch", "model", None)
    with jax.threefry_partitionable(False):
        draw = _sharded(lambda k: local_draw(jax.random.normal, spec, k, (4, 8, 6)), spec)
        key = jax.random.key(1)
        _assert_identical(draw(key), jax.jit(lambda k: jax.random.normal(k, (4, 8, 6)))(key))
        assert _bits_shapes(draw, key) == [(4, 8, 6)]


def test_a_key_of_another_impl_is_drawn_whole_and_sliced() -> None:
    spec = P("batch", "model", None)
    key = jax.random.key(1, impl="rbg")
    got = _sharded(lambda k: local_draw(jax.random.uniform, spec, k, (4, 8, 6)), spec)(key)
    _assert_identical(got, jax.jit(lambda k: jax.random.uniform(k, (4, 8, 6)))(key))


def test_a_parameter_array_of_the_global_shape_is_drawn_whole_and_sliced() -> None:
    spec = P("batch", "model", None)
    p = jnp.linspace(0.0, 1.0, 4 * 8 * 6).reshape(4, 8, 6)
    key = jax.random.key(2)
    got = _sharded(lambda k: local_draw(jax.random.bernoulli, spec, k, p, (4, 8, 6)), spec)(key)
    _assert_identical(got, jax.jit(lambda k: jax.random.bernoulli(k, p, (4, 8, 6)))(key))


# -- end to end: attention-probability dropout through @mesh and a converted file -------------------

RATE = 0.25


@mesh(batch=2, model=4, rules={"heads": "model"})
def attention_dropout(probs: Tensor["batch", "heads", "q", "k"], key: Tensor[()]) -> Tensor["batch", "heads", "q", "k"]:
    keep = jax.random.bernoulli(key, 1.0 - RATE, probs.shape)
    return jnp.where(keep, probs / (1.0 - RATE), 0.0)


@mesh(batch=2, model=4, rules={"d": "model"})
def noisy(x: Tensor["batch", "d"], key: Tensor["key_words"]) -> Tensor["batch", "d"]:
    return x * jax.random.uniform(key, x.shape, minval=0.5, maxval=1.5) + jax.random.normal(key, shape=x.shape)


def _probs() -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.random((4, 8, 6, 10), dtype=np.float32)


def test_the_rewrite_draws_blockwise() -> None:
    assert "mr.local_draw(jax.random.bernoulli, mr.P(\"batch\", \"model\", None, None)" in attention_dropout.source
    assert "local_block" not in attention_dropout.source


def test_dropout_through_the_decorator_forward_and_gradient() -> None:
    probs, key = _probs(), jax.random.key(7)
    _assert_identical(attention_dropout(probs, key), jax.jit(attention_dropout.reference)(probs, key))
    weights = np.linspace(-1, 1, probs.size, dtype=np.float32).reshape(probs.shape)

    def loss(f):
        return jax.grad(lambda p: jnp.sum(f(p, key) * weights))

    np.testing.assert_array_equal(np.asarray(jax.jit(loss(attention_dropout))(probs)),
                                  np.asarray(jax.jit(loss(attention_dropout.reference))(probs)))


def test_a_raw_key_through_the_decorator() -> None:
    x = np.linspace(-1, 1, 8 * 12, dtype=np.float32).reshape(8, 12)
    key = jax.random.PRNGKey(3)
    # The draws are bit-identical (above); x * u + n may be fused differently by the two compiles
    # (XLA:CPU contracts to FMA depending on the host), so the result is compared to rounding.
    np.testing.assert_allclose(np.asarray(noisy(x, key)), np.asarray(jax.jit(noisy.reference)(x, key)),
                               rtol=1e-6, atol=1e-6)
    assert noisy.source.count("mr.local_draw(") == 2


SOURCE = textwrap.dedent('''\
    import jax
    import jax.numpy as jnp
    from meshify import Tensor, mesh


    def dropout(x, key, rate):
        keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
        return jnp.where(keep, x / (1.0 - rate), 0.0)


    @mesh(batch=2, model=4, rules={"heads": "model"})
    def attention(probs: Tensor["batch", "heads", "q", "k"], v: Tensor["batch", "k", "heads", "d"],
                  key: Tensor[()]) -> Tensor["batch", "q", "heads", "d"]:
        return jnp.einsum("bhqk,bkhd->bqhd", dropout(probs, key, 0.1), v)
''')


def test_dropout_through_a_converted_file_forward_and_gradient(tmp_path) -> None:
    (tmp_path / "model.py").write_text(SOURCE)
    out = tmp_path / "model_sharded.py"
    result = CliRunner().invoke(app, ["convert", str(tmp_path / "model.py"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "jax.random.bernoulli, mr.P(\"batch\", \"model\", None, None)" in out.read_text()
    spec = importlib.util.spec_from_file_location("meshify_test_random_converted", out)
    converted = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(converted)
    probs = _probs()
    v = np.linspace(-1, 1, 4 * 10 * 8 * 3, dtype=np.float32).reshape(4, 10, 8, 3)
    key = jax.random.key(5)
    np.testing.assert_allclose(np.asarray(converted.attention(probs, v, key)),
                               np.asarray(converted.attention.reference(probs, v, key)), rtol=1e-6, atol=1e-6)

    def grads(f):
        return jax.jit(jax.grad(lambda p, w: jnp.sum(jnp.tanh(f(p, w, key))), argnums=(0, 1)))(probs, v)

    for got, want in zip(grads(converted.attention), grads(converted.attention.reference)):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
    # The dropout mask itself is the reference's, bit for bit: the gradient is zero exactly where it drops.
    zero = np.asarray(grads(converted.attention)[0]) == 0
    np.testing.assert_array_equal(zero, np.asarray(grads(converted.attention.reference)[0]) == 0)

