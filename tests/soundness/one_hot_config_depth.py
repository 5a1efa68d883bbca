"""``jax.nn.one_hot(targets, cfg.vocab)`` with the depth a config's int (a name meshify cannot size): an
inferred dim after the config field, whole on every device, that lines up with the vocabulary it meets,
split over 'model' (each device takes its block), with and without a hint on the result; a literal depth
beside an unsplit dim; label smoothing written out; out-of-range targets (all-zero rows); gradients through
the logits.  Before, "one_hot depth whose dim meshify cannot name"."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    vocab: int = 16
    smoothing: float = 0.1


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(logits: Tensor["batch", "vocab"], targets: Tensor["batch"], small: Tensor["batch", "k"],
      cfg: Config = Config()) -> tuple[Tensor[()], Tensor[()], Tensor["batch"]]:
    logp = jax.nn.log_softmax(logits)
    onehot: Tensor["batch", "vocab"] = jax.nn.one_hot(targets, cfg.vocab)
    soft = jax.nn.one_hot(targets, cfg.vocab) * (1 - cfg.smoothing) + cfg.smoothing / cfg.vocab
    picked = jnp.sum(jax.nn.one_hot(targets % 3, 3) * small, axis=-1)
    return -jnp.sum(onehot * logp), -jnp.mean(jnp.sum(soft * logp, axis=-1)), picked


def inputs():
    rng = np.random.default_rng(8)
    return (rng.standard_normal((4, 16)).astype(np.float32), np.array([0, 15, 16, -1], np.int32),
            rng.standard_normal((4, 3)).astype(np.float32))
