"""Real code keeps alternatives behind config flags: an associative-scan path (no rule) next to a
sequential one, an FFT mixer in an else branch. meshify writes the branch it cannot rewrite as an error
raised when a call takes it, so calls that never take it run (decorator and converted, gradients)."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    scan: str = "sequential"
    mixer: str = "mlp"


def combine(left, right):
    return left[0] * right[0], right[0] * left[1] + right[1]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(a: Tensor["batch", "length"], x: Tensor["batch", "length", "d_model"], w: Tensor["d_model", "d_ff"],
      cfg: Config = Config()):
    if cfg.scan == "associative":
        states = jax.lax.associative_scan(combine, (a, a * 0.5), axis=1)[1]
    else:
        states = jnp.cumsum(a * 0.5, axis=1)
    h = jax.nn.gelu(x @ w)
    if cfg.mixer == "mlp":
        mixed = h.sum(-1)
    else:
        mixed = jnp.fft.fft(h, axis=-1).real.sum(-1)
    return states + mixed


def inputs():
    rng = np.random.default_rng(0)
    return (rng.normal(size=(8, 16)).astype(np.float32), rng.normal(size=(8, 16, 8)).astype(np.float32),
            (rng.normal(size=(8, 32)) / 3).astype(np.float32))
