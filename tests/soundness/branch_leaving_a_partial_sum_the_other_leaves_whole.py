"""An ``if`` on a static value whose one branch leaves a partial sum and the other leaves the same array whole
(dense and model-parallel layers interleaved by ``if i % 2 == 0`` / ``elif`` in a static loop, as GLaM/Switch do; an ``if``
without ``else`` over a whole value): was refused ("'y' has layout ... partial over 'model' after one branch and
... after the other").  The partial sum is completed at the end of its branch.  float16 too (the psum casts
back).  Found by the attack on new model styles (session 18)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_model"], ws: list[Tensor["d_model", "d_ff"]], vs: list[Tensor["d_ff", "d_model"]],
      gated: bool = True):
    for i, (w, v) in enumerate(zip(ws, vs)):
        if i % 2 == 0:
            y = jnp.tanh(x @ w) @ v
        elif i == 1:
            y = x * 0.5
        else:
            y = jnp.tanh(x)
        x = x + y
    z = x * 0.5
    if gated:
        z = jnp.tanh(x @ ws[0]) @ vs[0]
    return x + z


def inputs():
    rng = np.random.default_rng(449)
    r = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float16)  # noqa: E731
    return r(4, 8), [r(8, 16) for _ in range(4)], [r(16, 8) for _ in range(4)]
