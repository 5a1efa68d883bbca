"""S5's bidirectional option: ``if bidirectional: h = jnp.concatenate((h, back), axis=-1)``, the flag a config
field passed to a helper (known only when traced), the states ``d_hidden`` split over 'model'; after the if, ``h``
is read by ``C @ h`` with ``C: Tensor["d_model", "states"]`` (``states`` twice ``d_hidden`` when the flag is on, as
long when off).  The branches leave ``d_hidden`` and ``d_hidden?`` (the joined dim, of another size): after the if
it is named ``d_hidden?``, which lines up with ``states``.  Before, the user's ``d_hidden`` was kept and the
contraction refused ("@ letter 'k' is dim 'states' in one operand and 'd_hidden'", the LRU zoo attack, session 35).
Both flags, values and gradients."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    bidirectional: bool = True


def states(a, b, bidirectional):
    h = jnp.cumsum(a * b, axis=0)
    if bidirectional:
        back = jnp.cumsum(a[::-1] * b[::-1], axis=0)[::-1]
        h = jnp.concatenate((h, back), axis=-1)
    return h


@mesh(batch=2, model=4, rules={"d_hidden": "model", "states": "model"})
def f(a: Tensor["length", "d_hidden"], b: Tensor["length", "d_hidden"], c: Tensor["d_model", "states"],
      cfg: Config = Config()) -> Tensor["length", "d_model"]:
    h = states(a, b, cfg.bidirectional)
    return jax.vmap(lambda x: c @ x)(h)


def scenario(mod, pick):
    a, b, c = inputs()
    fn = pick(mod.f)
    grads = jax.grad(lambda a, c: jnp.sum(jnp.sin(fn(a, b, c))), argnums=(0, 1))(a, c)
    grads_one = jax.grad(lambda a, c: jnp.sum(jnp.sin(fn(a, b, c, mod.Config(False)))), argnums=(0, 1))(a, c[:, :8])
    return fn(a, b, c), fn(a, b, c[:, :8], mod.Config(False)), grads, grads_one


def inputs():
    rng = np.random.default_rng(3501)
    return (rng.standard_normal((6, 8)).astype(np.float32), rng.standard_normal((6, 8)).astype(np.float32),
            rng.standard_normal((4, 16)).astype(np.float32))
