"""``jnp.tile(latents[None], (b, 1, 1))`` (a Perceiver's learned latent array, one copy per example, ``b`` read
off the input's batch): the new size-1 dim tiled to the batch is the batch dim, split by the rules, each device
tiling only its block, the latents' own split (reps of 1) kept; also a trailing rep on a whole dim
(``jnp.tile(v, (1, 2))``, an inferred ``d_tiled?`` dim) and reps shorter than the rank.  Before, jnp.tile had no
rule: its result was of unknown dims, refused where it met a split value ('cannot infer the dims of ...')."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "d": "model"})
def f(x: Tensor["batch", "latents", "d"], latents: Tensor["latents", "d"], v: Tensor["batch", "e"]):
    b = x.shape[0]
    z = jnp.tile(latents[None], (b, 1, 1))
    w = jnp.tile(v, (1, 2))
    u = jnp.tile(latents, (1,))
    return x * z + u, jnp.tanh(w)


def inputs():
    rng = np.random.default_rng(7)
    return (rng.standard_normal((4, 8, 16)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.standard_normal((4, 3)).astype(np.float32))
