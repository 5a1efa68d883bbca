import jax
import jax.numpy as jnp
from jax.numpy import einsum as es
from meshify import Tensor, mesh


@mesh(batch=2, model=4, rules={"vocab": "model"})
def stats(logits: Tensor["batch", "vocab"]) -> tuple[Tensor["batch"], Tensor["batch"], Tensor["batch", "vocab"]]:
    m = logits.max(axis=-1)
    mu = jnp.mean(logits, axis=1)
    p = jax.nn.softmax(logits, axis=-1)
    return m, mu - jax.nn.logsumexp(logits, axis=-1), p


@mesh(batch=2, model=4)
def scaled(x: Tensor["batch", "model"], w: Tensor["model", "d"]) -> Tensor["batch", "d"]:
    n = x.shape[1]
    y = es("bm,md->bd", x, w) / n
    return y
