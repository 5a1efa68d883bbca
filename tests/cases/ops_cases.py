"""The op corpus: plain single-device functions with ``Tensor`` hints, one per behaviour.

Each function is ordinary JAX and is its own reference.  The tests
(``tests/test_ops_*.py``) write its source under a ``@mesh(...)`` decorator for every
mesh of ``harness.MESHES`` and every rule set the case names, import it (the
decorator path), convert it with ``convert_source`` and import that too (the
converted-file path), and compare both with the function itself on 8 simulated CPU
devices.  ``@case`` only registers metadata; generated modules do not see it.

Generated modules start with ``harness.HEADER``: the imports below are the only
globals a case may use.  Rules name the mesh axes ``data`` and ``model``; on the
one-axis mesh ``8`` (axis ``model``) mentions of ``data`` are dropped.
"""

from typing import NamedTuple  # noqa: F401  (generated modules import it: harness.HEADER)

import jax
import jax.numpy as jnp
import jax.numpy as xp
import numpy as np
from jax import nn
from jax.nn import relu
from jax.nn import softmax as sm
from jax.numpy import einsum as es
from jax.numpy import maximum
from jax.numpy import sum as jsum

from meshify import Tensor

from .harness import case

#: Rule sets, by name.  Each case lists the ones that exercise it.
RULES: dict[str, dict[str, object]] = {
    # Megatron tensor parallelism x data parallelism: hidden, heads and vocab over 'model'.
    "tp": {"batch": "data", "d_ff": "model", "heads": "model", "vocab": "model"},
    # The model dim over 'model': contractions over it leave partial sums.
    "dm": {"batch": "data", "d_model": "model"},
    # Length over 'data', the model dim over 'model': two contracted dims on two axes.
    "mixed": {"length": "data", "d_model": "model"},
    # Sequence split over 'model', the hidden dim over 'data'.
    "seq": {"length": "model", "kv_length": "model", "d_ff": "data"},
    # The batch over both axes (8 shards).
    "flat": {"batch": ("data", "model")},
    # The contracted dim over both axes: partial over two axes at once.
    "dm2": {"d_model": ("data", "model")},
    # The vocabulary over both axes (8 shards), the batch over neither.
    "vocab2": {"vocab": ("data", "model")},
    # Keys and values split along the sequence: attention's softmax runs over a split dim.
    "kv": {"kv_length": "model", "batch": "data"},
    # One axis wanted by two dims of the same product: one side must be gathered.
    "cross": {"batch": "model", "d_ff": "model", "d_model": "data"},
    # The same with nothing else split: the partial sum over 'model' is the only one.
    "cross1": {"batch": "model", "d_ff": "model"},
    # Megatron sequence parallelism: 'seq' (the renamed length) and d_model over 'model'.
    "sp": {"batch": "data", "d_model": "model", "seq": "model"},
    # Length and hidden dim both over 'model': the FFN gathers its weights.
    "lf": {"batch": "data", "length": "model", "d_ff": "model"},
    # Axes listed against mesh order: shard i of 8 is (model, data) = divmod(i, data size).
    "rev": {"d_ff": ("model", "data"), "vocab": ("model", "data")},
    # The same for two dims of one product.
    "revcross": {"batch": ("model", "data"), "d_ff": ("model", "data")},
    # Nothing split: the rewrite must be the identity.
    "none": {},
}


# -- contractions -------------------------------------------------------------------------


@case("tp", "dm", "flat", "dm2", "rev", grad=True)
def ffn(x: Tensor["batch", "length", "d_model"],
        w1: Tensor["d_model", "d_ff"],
        w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    h = jax.nn.relu(jnp.einsum("bld,df->blf", x, w1))
    return jnp.einsum("blf,fd->bld", h, w2)


@case("tp", "dm", "none")
def einsum_2d(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return jnp.einsum("bd,df->bf", x, w)


@case("dm", "tp", "dm2")
def einsum_implicit(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return jnp.einsum("bd,df", x, w)


@case("tp", "dm")
def einsum_implicit_reorders(x: Tensor["batch", "d_model"],
                             w: Tensor["d_model", "d_ff"]) -> Tensor["d_ff", "batch"]:
    # Implicit output letters are sorted: "xd,df" -> "fx".
    return jnp.einsum("xd,df", x, w)


@case("seq", "dm", "tp")
def einsum_ellipsis(x: Tensor["batch", "length", "d_model"],
                    w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "length", "d_ff"]:
    return jnp.einsum("...d,df->...f", x, w)


@case("dm", "seq")
def einsum_ellipsis_implicit(x: Tensor["batch", "length", "d_model"],
                             w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "length", "d_ff"]:
    return jnp.einsum("...d,df", x, w)


@case("dm", "seq")
def einsum_ellipsis_both(x: Tensor["batch", "length", "d_model"],
                         y: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length"]:
    return jnp.einsum("...d,...d->...", x, y)


@case("tp", "dm")
def einsum_three_operands(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"],
                          s: Tensor["d_ff"]) -> Tensor["batch", "d_ff"]:
    return jnp.einsum("bd,df,f->bf", x, w, s)


@case("dm", "flat")
def einsum_to_scalar(x: Tensor["batch", "d_model"], y: Tensor["batch", "d_model"]) -> Tensor[()]:
    return jnp.einsum("bd,bd->", x, y)


@case("tp", "flat")
def einsum_outer(a: Tensor["batch"], b: Tensor["d_ff"]) -> Tensor["batch", "d_ff"]:
    return jnp.einsum("b,f->bf", a, b)


@case("dm", "seq")
def einsum_ellipsis_broadcast(x: Tensor["batch", "length", "d_model"],
                              y: Tensor["length", "d_model"]) -> Tensor["batch", "length"]:
    # The ellipsis covers two dims of x and one of y, aligned from the right.
    return jnp.einsum("...d,...d->...", x, y)


@case("dm", "tp")
def einsum_spelling(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    # Spaces, upper-case letters and keyword arguments.
    return jnp.einsum("BD, DF -> BF", x, w) + jnp.einsum("bd,df->bf", x, w, precision=jax.lax.Precision.HIGHEST)


@case("tp", "kv", "seq", grad=True)
def attention(q: Tensor["batch", "length", "heads", "d_head"],
              k: Tensor["batch", "kv_length", "heads", "d_head"],
              v: Tensor["batch", "kv_length", "heads", "d_head"]) -> Tensor["batch", "length", "heads", "d_head"]:
    scores = jnp.einsum("blhd,bmhd->bhlm", q, k) / np.sqrt(q.shape[-1])
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("bhlm,bmhd->blhd", probs, v)


@case("tp", "dm")
def einsum_qualified(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return jax.numpy.einsum("bd,df->bf", x, w)


@case("dm", "tp")
def einsum_alias(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return es("bd,df->bf", x, w)


@case("tp", "dm")
def qualified_name_spellings(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"],
                             w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "d_model"]:
    # Module aliases, imported modules and imported functions, renamed or not.
    h = relu(xp.einsum("bd,df->bf", x, w)) + nn.gelu(jax.numpy.einsum("bd,df->bf", x, w))
    p = sm(h, axis=-1) + jax.nn.softmax(h) + maximum(h, 0.0)
    s = jsum(p, axis=-1, keepdims=True)
    return es("bf,fd->bd", p / s, w2)


@case("tp", "dm", "rev", grad=True)
def matmul_operator(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return x @ w


@case("dm", "seq")
def matmul_operator_batched(x: Tensor["batch", "length", "d_model"],
                            w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "length", "d_ff"]:
    return x @ w


@case("dm", "seq", "flat")
def matmul_operator_both_batched(a: Tensor["batch", "length", "d_model"],
                                 b: Tensor["batch", "d_model", "d_ff"]) -> Tensor["batch", "length", "d_ff"]:
    return a @ b


@case("dm", "tp")
def matmul_function(x: Tensor["batch", "length", "d_model"],
                    w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "length", "d_ff"]:
    return jnp.matmul(x, w)


@case("dm", "flat")
def matmul_vector(x: Tensor["batch", "d_model"], v: Tensor["d_model"]) -> Tensor["batch"]:
    return x @ v


@case("dm", "tp")
def vector_matmul(v: Tensor["d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["d_ff"]:
    return jnp.matmul(v, w)


@case("dm", "tp")
def dot_2d(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return jnp.dot(x, w)


@case("dm", "seq")
def dot_batched(x: Tensor["batch", "length", "d_model"],
                w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "length", "d_ff"]:
    return jnp.dot(x, w)


@case("dm", "tp")
def dot_nd(x: Tensor["batch", "d_model"],
           w: Tensor["heads", "d_model", "d_head"]) -> Tensor["batch", "heads", "d_head"]:
    # dot contracts the last dim of x with the second-to-last of w.
    return jnp.dot(x, w)


@case("dm", "tp")
def matmul_broadcast_lhs(x: Tensor["length", "d_model"],
                         w: Tensor["batch", "d_model", "d_ff"]) -> Tensor["batch", "length", "d_ff"]:
    return x @ w


@case("dm", "tp")
def vector_matmul_batched(v: Tensor["d_model"], w: Tensor["batch", "d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return v @ w


@case("dm", "flat")
def dot_vectors(a: Tensor["d_model"], b: Tensor["d_model"]) -> Tensor[()]:
    return jnp.dot(a, b)


@case("dm", "seq")
def dot_3d_3d(x: Tensor["batch", "length", "d_model"],
              w: Tensor["heads", "d_model", "d_head"]) -> Tensor["batch", "length", "heads", "d_head"]:
    return jnp.dot(x, w)


@case("dm", "tp", grad=True)
def transposed_weight(x: Tensor["batch", "d_model"], w: Tensor["d_ff", "d_model"]) -> Tensor["batch", "d_ff"]:
    return x @ w.T


@case("dm", "tp")
def transposed_result(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["d_ff", "batch"]:
    return (x @ w).T


@case("dm", "tp", grad=True)
def matmul_chain(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"],
                 w2: Tensor["d_ff", "d_head"]) -> Tensor["batch", "d_head"]:
    # Under "dm" the partial sum rides through the second (linear) product.
    return (x @ w1) @ w2


# -- elementwise ----------------------------------------------------------------------------


@case("dm", "flat", grad=True)
def arithmetic(x: Tensor["batch", "d_model"], y: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
    return (x + y) * y - x / (y * y + 1.0) + x ** 2 - (-y)


@case("dm", "seq")
def broadcast_vector(x: Tensor["batch", "length", "d_model"],
                     b: Tensor["d_model"]) -> Tensor["batch", "length", "d_model"]:
    return x * b + b


@case("dm", "seq", "flat")
def broadcast_matrix(x: Tensor["batch", "length", "d_model"],
                     s: Tensor["length", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    return s - x / (s * s + 2.0)


@case("dm", "flat")
def python_scalars(x: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
    return 2.0 * x + 1 - x / 3 + 0.5 ** x - 2 ** 2 * x


@case("dm", "flat")
def numpy_scalars(x: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
    return np.float32(0.25) * x + x * np.sqrt(2.0) - np.pi + jnp.float32(3.0) * x


@case("dm", "flat")
def unary_minus_plus(x: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
    neg = -x
    return neg + (+x) * -2.0 - (-neg)


@case("dm", "flat")
def comparisons(x: Tensor["batch", "d_model"], y: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
    bigger = jnp.where(x > y, x, y)
    sign = jnp.where(x <= 0.0, -1.0, 1.0)
    return bigger + sign * (x != y) + (x < y).astype(jnp.float32) - (x >= 0.5) * 2.0 + (y == y * 1.0)


@case("dm", "seq")
def comparison_result(x: Tensor["batch", "length", "d_model"],
                      b: Tensor["d_model"]) -> Tensor["batch", "length", "d_model"]:
    return x < b


@case("dm", "flat", grad=True)
def where_leaky(x: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
    return jnp.where(x > 0, x, 0.01 * x)


@case("dm", "flat")
def maximum_minimum(x: Tensor["batch", "d_model"], y: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
    return jnp.maximum(x, y) - jnp.minimum(x, 0.0) + jnp.maximum(0.5, y) * jnp.minimum(y, x)


@case("dm", "flat")
def astype_roundtrip(x: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
    return x.astype(jnp.bfloat16).astype(jnp.float32) * 2.0 + x.astype(jnp.float16).astype(jnp.float32)


@case("dm", "tp")
def astype_of_partial(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return (x @ w).astype(jnp.float32) * 2.0


@case("dm", "flat", grad=True)
def transcendental(x: Tensor["batch", "d_model"], y: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
    return jnp.exp(x) + jnp.log(jnp.abs(y) + 1.0) + jnp.tanh(x) * jnp.sqrt(jnp.abs(x) + 0.1) - jnp.abs(y)


@case("dm", "flat", grad=True)
def activations(x: Tensor["batch", "d_model"]) -> Tensor["batch", "d_model"]:
    return jax.nn.relu(x) + jax.nn.gelu(x) + jax.nn.silu(x) * jax.nn.sigmoid(x)


@case("dm", "dm2", grad=True)
def activation_of_partial(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    # gelu is not linear: the partial sum is reduced before it.
    return jax.nn.gelu(x @ w)


@case("dm", "tp", grad=True)
def bias_after_partial(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"],
                       b: Tensor["d_ff"]) -> Tensor["batch", "d_ff"]:
    # Adding a whole bias to a partial sum would add it once per shard.
    return x @ w + b


@case("dm", "dm2", grad=True)
def linear_on_partials(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"],
                       w2: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    a = x @ w1
    b = jnp.einsum("bd,df->bf", x, w2)
    return 0.5 * (a - b) / 4.0 + -a


@case("dm", "dm2")
def product_of_partials(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"],
                        w2: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return (x @ w1) * (x @ w2)


@case("dm", "dm2")
def partial_times_array(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"],
                        s: Tensor["d_ff"]) -> Tensor["batch", "d_ff"]:
    return (x @ w) * s


@case("dm", "dm2")
def partial_over_array(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"],
                       y: Tensor["batch", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return (x @ w) / (y * y + 1.0) + y / ((x @ w) ** 2 + 1.0)


@case("dm", "dm2")
def partial_with_scalars(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    # Adding a scalar is not linear in the partial sum; scaling is.
    return (x @ w) + 1.0 - 2.0 * (1.0 - (x @ w)) * 3 / 2


@case("dm", "dm2")
def nonlinear_on_partial(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    h = x @ w
    return jnp.where(h > 0.0, h, 0.0) + jnp.maximum(h, -0.5) + jnp.exp(-jnp.abs(h))


@case("mixed")
def partials_over_different_axes(x: Tensor["batch", "length", "d_model"], z: Tensor["batch", "d_model"],
                                 w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    # a is partial over 'data' x 'model', b over 'model' only.
    a = jnp.einsum("bld,df->bf", x, w)
    b = z @ w
    return a + b


@case("dm", "dm2")
def function_forms_on_partials(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"],
                               w2: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    a = jnp.multiply(x @ w1, 2.0)
    b = jnp.add(a, jnp.negative(x @ w2))
    return jnp.subtract(b, jnp.divide(x @ w1, 4.0)) * np.float32(0.5)


@case("dm", "tp")
def partial_reused(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    # One variable, partial under "dm", used by a nonlinear op and by linear ones.
    h = x @ w
    a = jnp.tanh(h)
    b = h * 3.0
    return a + b + h


@case("dm", "flat")
def scalar_parameter(x: Tensor["batch", "d_model"], s: Tensor[()]) -> Tensor["batch", "d_model"]:
    return x * s + s


@case("dm", "dm2")
def augmented_assignment(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"],
                         w2: Tensor["d_model", "d_ff"], y: Tensor["batch", "d_ff"]) -> Tensor["batch", "d_ff"]:
    h = x @ w1
    h += x @ w2
    h *= 0.5
    h -= y
    h /= 2.0
    return h


# -- reductions -----------------------------------------------------------------------------


@case("dm", "seq", "flat", grad=True)
def sum_function(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length"]:
    return jnp.sum(x, axis=-1)


@case("seq", "dm", "flat")
def sum_method(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "d_model"]:
    return x.sum(axis=1) + x.sum(-2)


@case("seq", "dm", "flat")
def sum_tuple_axis(x: Tensor["batch", "length", "d_model"]) -> Tensor["length"]:
    return jnp.sum(x, axis=(0, 2))


@case("dm", "seq")
def sum_keepdims(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    return x - x.sum(axis=-1, keepdims=True) / 4 + jnp.sum(x, axis=0, keepdims=True)


@case("dm", "flat")
def sum_all(x: Tensor["batch", "length", "d_model"]) -> Tensor[()]:
    return x.sum() + jnp.sum(x * x)


@case("dm", "seq", "flat", grad=True)
def mean_function(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length"]:
    return jnp.mean(x, axis=2)


@case("seq", "dm")
def mean_method_keepdims(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    return x - x.mean(axis=-2, keepdims=True) + x.mean(-1, keepdims=True)


@case("dm", "flat")
def mean_all(x: Tensor["batch", "length", "d_model"]) -> Tensor[()]:
    return jnp.mean(x) + x.mean()


@case("dm", "seq", grad=True)
def layer_norm(x: Tensor["batch", "length", "d_model"], g: Tensor["d_model"]) -> Tensor["batch", "length", "d_model"]:
    mu = x.mean(axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / jnp.sqrt(var + 1e-5) * g


@case("dm", "seq", "flat", grad=True)
def max_function(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length"]:
    return jnp.max(x, axis=-1)


@case("dm", "seq")
def max_method_keepdims(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    return x - x.max(axis=-1, keepdims=True) + x.max(1, keepdims=True)


@case("seq", "dm", "flat", grad=True)
def min_both_forms(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "d_model"]:
    return x.min(axis=1) + jnp.min(x, axis=-2)


@case("dm", "flat")
def max_min_all(x: Tensor["batch", "length", "d_model"]) -> Tensor[()]:
    return x.max() - jnp.min(x)


@case("dm", "seq", "flat")
def reductions_more_forms(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    a = jnp.mean(x, -1, keepdims=True) + jnp.max(x, axis=0, keepdims=True) - jnp.min(x, axis=-2, keepdims=True)
    b = x.mean(axis=(1, 2), keepdims=True) + jnp.sum(x, axis=None) + x.max(axis=(0, 1), keepdims=True)
    return x * a + b


@case("dm", "seq")
def keepdims_positional(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    # keepdims passed by position: jnp.sum(a, axis, dtype, out, keepdims), jnp.max(a, axis, out, keepdims).
    return (x - jnp.max(x, -1, None, True) + jnp.sum(x, -1, None, None, True) + x.max(-2, None, True)
            + x.mean(-1, None, None, True) - jnp.min(x, 1, None, True))


@case("dm", "seq")
def reductions_tuple_axes(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch"]:
    return x.sum(axis=(-1, -2)) + x.mean((1, 2)) + x.max((-2, -1)) + jnp.min(x, (1, 2))


@case("dm", "seq")
def reduce_kept_dim(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length"]:
    # Reducing the size-1 dim a keepdims reduction left.
    return x.max(-1, keepdims=True).sum(-1) + jnp.sum(x.sum(-1, keepdims=True), axis=-1)


@case("dm", "seq")
def reduction_dtype(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length"]:
    return jnp.sum(x, axis=-1, dtype=jnp.float32) + jnp.mean(x, -1, jnp.float32)


@case("dm", "tp", "dm2")
def mean_of_partial(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch"]:
    return jnp.mean(x @ w, axis=-1) + (x @ w).min(axis=-1)


@case("dm", "tp", grad=True)
def sum_of_partial(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch"]:
    return (x @ w).sum(axis=-1)


@case("dm", "tp")
def max_of_partial(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]) -> Tensor["batch"]:
    return (x @ w).max(axis=-1)


# -- the softmax family ----------------------------------------------------------------------


@case("tp", "none", "vocab2", "rev", grad=True)
def softmax_last(x: Tensor["batch", "vocab"]) -> Tensor["batch", "vocab"]:
    return jax.nn.softmax(x, axis=-1)


@case("tp", "vocab2")
def softmax_default_axis(x: Tensor["batch", "length", "vocab"]) -> Tensor["batch", "length", "vocab"]:
    return jax.nn.softmax(x)


@case("tp", "flat", grad=True)
def softmax_first_axis(x: Tensor["batch", "vocab"]) -> Tensor["batch", "vocab"]:
    return jax.nn.softmax(x, axis=0)


@case("tp", "vocab2", grad=True)
def log_softmax_last(x: Tensor["batch", "vocab"]) -> Tensor["batch", "vocab"]:
    return jax.nn.log_softmax(x, axis=-1)


@case("tp", "flat")
def log_softmax_two_axes(x: Tensor["batch", "vocab"]) -> Tensor["batch", "vocab"]:
    return jax.nn.log_softmax(x, axis=0) + jax.nn.log_softmax(x)


@case("tp", "vocab2", grad=True)
def logsumexp_last(x: Tensor["batch", "length", "vocab"]) -> Tensor["batch", "length"]:
    return jax.nn.logsumexp(x, axis=-1)


@case("tp", "flat")
def logsumexp_keepdims(x: Tensor["batch", "vocab"]) -> Tensor["batch", "vocab"]:
    return x - jax.nn.logsumexp(x, axis=-1, keepdims=True) + jax.nn.logsumexp(x, axis=0, keepdims=True)


@case("tp", "vocab2")
def softmax_family_axes(x: Tensor["batch", "vocab", "length"]) -> Tensor["batch", "vocab", "length"]:
    # Negative and tuple axes.
    return (jax.nn.softmax(x, axis=-2) + jax.nn.log_softmax(x, axis=(0, 1))
            - jax.nn.logsumexp(x, axis=(-3, -2), keepdims=True))


@case("tp", "vocab2")
def softmax_family_positional(x: Tensor["batch", "vocab"]) -> Tensor["batch", "vocab"]:
    return jax.nn.softmax(x, -1) + jax.nn.log_softmax(x, 1) + jax.nn.logsumexp(x, -1, None, True)


@case("tp", "flat")
def logsumexp_all(x: Tensor["batch", "vocab"]) -> Tensor[()]:
    return jax.nn.logsumexp(x)


@case("tp", "kv", grad=True)
def causal_attention(q: Tensor["batch", "length", "heads", "d_head"],
                     k: Tensor["batch", "kv_length", "heads", "d_head"],
                     v: Tensor["batch", "kv_length", "heads", "d_head"]) -> Tensor["batch", "length", "heads", "d_head"]:
    mask: Tensor["length", "kv_length"] = jnp.tril(jnp.ones((q.shape[1], k.shape[1]), dtype=bool))
    scores = jnp.einsum("blhd,bmhd->bhlm", q, k) * q.shape[-1] ** -0.5
    scores = jnp.where(mask, scores, -1e9)
    probs = jax.nn.softmax(scores, axis=-1)
    return jnp.einsum("bhlm,bmhd->blhd", probs, v)


@case("tp", "dm", grad=True)
def softmax_of_logits(x: Tensor["batch", "d_model"], w: Tensor["d_model", "vocab"]) -> Tensor["batch", "vocab"]:
    return jax.nn.softmax(x @ w, axis=-1)


@case("tp", "dm", "vocab2", "dm2", "rev", grad=True)
def cross_entropy(x: Tensor["batch", "d_model"], w: Tensor["d_model", "vocab"],
                  targets: Tensor["batch", "vocab"]) -> Tensor[()]:
    logp = jax.nn.log_softmax(x @ w, axis=-1)
    return -(logp * targets).sum(axis=-1).mean()


# -- .shape, .size ---------------------------------------------------------------------------


@case("dm", "seq", "flat")
def shape_entry(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length"]:
    # .shape[i] of a split dim is its global size.
    return x.sum(axis=-1) / x.shape[-1] + x.shape[0] * x.max(axis=2)


@case("dm", "seq", "flat")
def shape_tuple(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    n, l, d = x.shape
    return x * (n + 2 * l) / d + x.size


@case("dm", "seq", grad=True)
def shape_builds_array(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    # A global-size array built from .shape and pinned to a split layout: a local slice.
    ramp: Tensor["d_model"] = jnp.arange(x.shape[-1], dtype=jnp.float32)
    rows: Tensor["length", "d_model"] = jnp.ones((x.shape[1], x.shape[2]), jnp.float32) * 0.5
    return x * ramp + rows


# -- layout changes ---------------------------------------------------------------------------


@case("cross", "cross1", "tp", grad=True)
def one_axis_two_dims(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"],
                      w2: Tensor["d_ff", "d_head"]) -> Tensor["batch", "d_head"]:
    # Under "cross", 'model' splits batch in x and d_ff in w1: one side is gathered.
    h = jnp.tanh(x @ w1)
    return h @ w2


@case("cross", "cross1", "tp")
def mismatched_operands(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"],
                        b1: Tensor["d_ff"]) -> Tensor["batch", "d_model"]:
    # x @ w1 keeps batch split; b1 is split over the same axis on d_ff.
    h = x @ w1 + b1
    return jnp.einsum("bf,df->bd", h, w1)


@case("cross", "cross1", "revcross", grad=True)
def reduce_scatter_return(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"]) -> Tensor["d_ff"]:
    # A partial sum over 'model' whose return hint splits d_ff over 'model': psum_scatter.
    h = jax.nn.relu(x @ w1)
    return h.sum(axis=0)


@case("cross", "cross1", "revcross")
def mean_scatter_return(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"]) -> Tensor["d_ff"]:
    return jnp.mean(jnp.tanh(x @ w1), axis=0)


@case("cross", "cross1", "revcross")
def slice_for_return(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"]) -> Tensor["d_ff"]:
    # pmax leaves d_ff whole; the return hint wants it split: a free local slice.
    return (x @ w1).max(axis=0)


@case("dm", "dm2", grad=True)
def annotated_psum(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"],
                   w2: Tensor["d_ff", "vocab"]) -> Tensor["batch", "vocab"]:
    h: Tensor["batch", "d_ff"] = x @ w1
    return jnp.tanh(h) @ w2


@case("cross", "cross1", "revcross")
def annotated_scatter(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"]) -> Tensor["d_ff"]:
    s: Tensor["d_ff"] = (x @ w1).sum(axis=0)
    return s * 2.0


@case("cross", "cross1")
def annotated_slice(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"],
                    b: Tensor["d_ff"]) -> Tensor["d_ff"]:
    m: Tensor["d_ff"] = jnp.max(x @ w1, axis=0)
    return m + b


@case("sp", grad=True)
def sequence_parallel(x: Tensor["batch", "length", "d_model"],
                      w: Tensor["d_model", "d_ff"]) -> Tensor["batch", "seq", "d_ff"]:
    # The hint renames length to seq, which the rules split over 'model', the axis the
    # contraction is partial over: reduce and split in one psum_scatter.
    y: Tensor["batch", "seq", "d_ff"] = jnp.einsum("bld,df->blf", x, w)
    return y


@case("lf", grad=True)
def all_to_all_hint(x: Tensor["batch", "length", "d_model"],
                    w1: Tensor["d_model", "d_ff"]) -> Tensor["batch", "seq", "d_ff"]:
    # The product keeps length split over 'model' (d_ff's weight is gathered); the hint
    # renames length to seq (unsplit) and wants d_ff split: 'model' moves between dims.
    h: Tensor["batch", "seq", "d_ff"] = jnp.tanh(jnp.einsum("bld,df->blf", x, w1))
    return h * 2.0


@case("lf", "tp", grad=True)
def gather_for_hint(x: Tensor["batch", "length", "d_model"]) -> Tensor["batch", "seq", "d_model"]:
    # Renaming the split length to the unmapped seq gathers it.
    y: Tensor["batch", "seq", "d_model"] = jnp.tanh(x)
    return y * 2.0


@case("dm", "tp", "flat", grad=True)
def tuple_return(x: Tensor["batch", "d_model"],
                 w: Tensor["d_model", "d_ff"]) -> tuple[Tensor["batch", "d_ff"], Tensor[()]]:
    h = x @ w
    return h, h.sum()


@case("dm", "tp")
def tuple_return_two_arrays(x: Tensor["batch", "d_model"],
                            w: Tensor["d_model", "d_ff"]) -> tuple[Tensor["batch", "d_ff"], Tensor["batch", "d_ff"]]:
    h = x @ w
    return h, h * 2.0


@case("dm", "tp", "none", "rev", grad=True)
def hybrid(x: Tensor["batch", "length", "d_model"], w1: Tensor["d_model", "d_ff"], b1: Tensor["d_ff"],
           w2: Tensor["d_ff", "d_model"]) -> Tensor["batch", "length", "d_model"]:
    h = jax.nn.gelu(jnp.einsum("bld,df->blf", x, w1) + b1)
    return x + jnp.einsum("blf,fd->bld", h, w2)


@case("dm", "dm2")
def deferred_chain(x: Tensor["batch", "d_model"], w1: Tensor["d_model", "d_ff"],
                   w2: Tensor["d_model", "d_ff"]) -> Tensor["batch", "d_ff"]:
    # Two partial sums over 'model', added: one psum, at the return.
    a = jnp.einsum("bd,df->bf", x, w1)
    b = jnp.einsum("bd,df->bf", x, w2)
    return a + b
