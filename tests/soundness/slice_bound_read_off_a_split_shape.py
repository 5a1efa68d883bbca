"""A slice bound written inline as ``x.shape[k]`` of a split dim (``b[: h.shape[-1]]`` with d_ff split, Whisper's
``pos[: x.shape[1]]`` with frames split, ``scale[: x.shape[0], None]`` with batch split): the bound was emitted as
written, so it read the block's size: wrong numbers (each row repeated), or a crash inside generated code.  The
bound bound to a name first (``T = x.shape[1]``) was right.  Found by the attack on new model styles (session 18)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"], b: Tensor["max_ff"],
      scale: Tensor["max_batch"]):
    h = x @ w
    return jax.nn.relu(h + b[: h.shape[-1]]) * scale[: x.shape[0], None]


@mesh(batch=2, model=4, rules={"frames": "model"})
def g(x: Tensor["batch", "frames", "d"], pos: Tensor["n_ctx", "d"]):
    return x + pos[: x.shape[1]] + pos[1: x.shape[1] + 1] * 0.5


def inputs():
    rng = np.random.default_rng(433)
    r = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    return {"f": (r(4, 8), r(8, 16), r(20), r(6)), "g": (r(2, 16, 4), r(24, 4))}
