"""A PPO step as RL code writes it: a value head's regression losses by optax (``huber_loss``, ``l2_loss``,
``squared_error``, with targets and without, ``delta=``), a frozen reference policy's parameters as
``jax.lax.stop_gradient(ref)`` of the whole pytree, and a metric added to the aux dict that
``jax.value_and_grad(..., has_aux=True)`` returns (``metrics["grad_norm"] = ...``: JAX builds that dict anew), ``return train_step(...)`` of a helper's (loss,
grads, metrics) and a static config changed by ``cfg._replace(scale=0.5)``.
Before, each was refused: "optax.huber_loss has no meshify rule" with a fix dropping data parallelism,
"stop_gradient on a tuple or pytree", "changes 'metrics' in place, a dict ... this function did not make",
"returns 'train_step(...)', a tuple, and has no return hint", "cannot infer the dims of 'cfg.scale'" (the PPO
attack)."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    scale: float = 1.0


class Head(NamedTuple):
    w: Tensor["d", "hidden"]
    v: Tensor["hidden"]


def value(p: Head, x):
    return jnp.tanh(x @ p.w) @ p.v


def loss_fn(p: Head, ref: Head, x, returns, old_values):
    values = value(p, x)
    frozen = value(jax.lax.stop_gradient(ref), x)
    clipped = old_values + jnp.clip(values - old_values, -0.2, 0.2)
    vf = jnp.maximum(optax.huber_loss(values, returns, delta=0.5), optax.l2_loss(clipped, returns))
    drift = optax.squared_error(values - frozen).mean() + optax.huber_loss(values - frozen).mean()
    loss = vf.mean() + 0.1 * drift
    return loss, {"vf": vf.mean(), "drift": drift}


@mesh(batch=2, model=4, rules={"hidden": "model"})
def step(p: Head, ref: Head, x: Tensor["batch", "d"], returns: Tensor["batch"], old_values: Tensor["batch"]):
    (loss, metrics), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, ref, x, returns, old_values)
    metrics["grad_norm"] = optax.global_norm(grads)
    metrics["hinge"] = optax.hinge_loss(returns, jnp.sign(old_values)).mean()
    return loss, metrics


def train_step(p: Head, ref: Head, x, returns, old_values):
    (loss, metrics), grads = jax.value_and_grad(loss_fn, has_aux=True)(p, ref, x, returns, old_values)
    return loss, grads, metrics


@mesh(batch=2, model=4, rules={"hidden": "model"})
def helper_step(p: Head, ref: Head, x: Tensor["batch", "d"], returns: Tensor["batch"], old_values: Tensor["batch"],
                cfg: Config = Config()):
    cfg = cfg._replace(scale=0.5)
    return train_step(p, ref, x * cfg.scale, returns, old_values)


def inputs():
    rng = np.random.default_rng(59)
    p = Head(*(rng.standard_normal(s).astype(np.float32) / 2 for s in ((4, 8), (8,))))
    ref = Head(*(a + 0.1 for a in p))
    x = rng.standard_normal((8, 4)).astype(np.float32)
    args = (p, ref, x, rng.standard_normal(8).astype(np.float32), rng.standard_normal(8).astype(np.float32))
    return {"step": args, "helper_step": args}
