"""jax.nn.glu along a split dim: a conformer's pointwise conv to 2 * channels with that dim split over 'model'
(Megatron's layout for a gated MLP), then the gate, a depthwise conv and the projection back; the gated dim of 16
over 4 and over all 8 devices (halves of 8 rows: one row each), and a partial sum gated (completed first).
Before: "jax.nn.glu along split dim 'ch2' ...: each device holds only its block of every row", with a fix to
unsplit it.  Now the halves move as jnp.split(x, 2, axis)'s sections (mr.glu: at most a block per device) and each
device gates its blocks."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def conv_module(x, w_pw1, w_dw, w_pw2):
    y = jax.nn.glu(jnp.einsum("btc,cd->btd", x, w_pw1), axis=-1)
    y = jax.lax.conv_general_dilated(y, w_dw, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"),
                                     feature_group_count=y.shape[-1])
    return x + jnp.einsum("btc,cd->btd", jax.nn.silu(y), w_pw2)


@mesh(batch=2, model=4, rules={"ch2": "model"})
def f(x: Tensor["batch", "time", "ch"], w_pw1: Tensor["ch", "ch2"], w_dw: Tensor["k", "one", "ch"],
      w_pw2: Tensor["ch", "ch"]) -> Tensor["batch", "time", "ch"]:
    return conv_module(x, w_pw1, w_dw, w_pw2)


@mesh(batch=8, rules={"ch2": "batch", "batch": None})
def g(x: Tensor["batch", "time", "ch"], w_pw1: Tensor["ch", "ch2"], w_dw: Tensor["k", "one", "ch"],
      w_pw2: Tensor["ch", "ch"]) -> Tensor["batch", "time", "ch"]:
    return conv_module(x, w_pw1, w_dw, w_pw2)


@mesh(batch=2, model=4, rules={"d": "model", "ff2": "model"})
def partial(x: Tensor["batch", "d"], w: Tensor["d", "ff2"], v: Tensor["d", "ff2"]):
    return jax.nn.glu(x @ w, axis=1) + jax.nn.glu(x @ v, axis=-1)  # (x @ w: a partial sum over 'model')


def inputs():
    rng = np.random.default_rng(3218)

    def r(*shape):
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)

    args = (r(4, 6, 8), r(8, 16), r(3, 1, 8), r(8, 8))
    return {"f": args, "g": args, "partial": (r(4, 8), r(8, 16), r(8, 16))}
