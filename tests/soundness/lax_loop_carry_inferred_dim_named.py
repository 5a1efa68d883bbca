"""``jax.lax.fori_loop`` and ``jax.lax.scan`` carries with an inferred dim (a slice's ``seq[1:]?``, a
reshape's) that the body lines up with a hinted dim: the carry enters the loop under the body's name.
Found by the fuzzer once slices of unsplit dims got inferred names ("the fori_loop carry changes layout:
[batch, seq?/'data'] in, [batch, seq/'data'] out")."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "d": "model"})
def f(x: Tensor["batch", "seq", "d"], m: Tensor["batch", "seq2"], w: Tensor["d", "e"]
      ) -> tuple[Tensor["batch", "seq2"], Tensor["batch", "e"]]:
    h = x[:, 1:].sum(-1)   # [batch, seq[1:]?], meeting m's seq2 in the body
    h = jax.lax.fori_loop(0, 2, lambda i, c: jnp.tanh(c * m), h)

    def step(c, xs):
        return c + jnp.tanh(xs @ w), None

    out, _ = jax.lax.scan(step, jnp.zeros((x.shape[0], w.shape[1])), jnp.swapaxes(x[:, :2], 0, 1))
    return h, out


def inputs():
    rng = np.random.default_rng(23)
    return (rng.standard_normal((4, 5, 8)).astype(np.float32), rng.standard_normal((4, 4)).astype(np.float32),
            (rng.standard_normal((8, 3)) * 0.3).astype(np.float32))
