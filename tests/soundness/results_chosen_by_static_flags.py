"""A model returning other results for other static flags, as HF-style and research code does:
``if return_hidden: return y, h``, an ``elif`` chain on a mode string, a flag on a config NamedTuple,
nested ifs; called with each value, positionally and by keyword, under jax.jit with static argnames."""

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Config(NamedTuple):
    return_attn: bool = False
    scale: float = 0.5


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"], return_hidden: bool = False):
    h = jnp.tanh(x @ w)
    y = (h * h).sum(-1)
    if return_hidden:
        return y, h
    return y


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def g(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"], mode: str = "sum", cfg: Config = Config()):
    h = jax.nn.gelu(x @ w) * cfg.scale
    if mode == "sum":
        out = h.sum(-1)
    elif mode == "both":
        if cfg.return_attn:
            return {"sum": h.sum(-1), "hidden": h, "x": x}
        return h.sum(-1), h
    else:
        return h
    return out


@mesh(batch=8, rules={"d_ff": None})
def k(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"], with_logits: bool = True):
    logits = x @ w
    loss = jax.nn.logsumexp(logits, axis=-1).mean()
    return (loss, logits) if with_logits else loss


def inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 16)).astype(np.float32)
    w = rng.normal(size=(16, 32)).astype(np.float32) / 4
    return {"f": (x, w), "g": (x, w), "k": (x, w)}


def scenario(mod, pick):
    (x, w), out = [jnp.asarray(a) for a in inputs()["f"]], []
    f, g, k = pick(mod.f), pick(mod.g), pick(mod.k)
    out += [f(x, w), f(x, w, True), f(x, w, return_hidden=True), f(x, w, False)]
    jf = jax.jit(f, static_argnames="return_hidden")
    out += [jf(x, w, return_hidden=True), jf(x, w)]
    for mode in ("sum", "both", "hidden"):
        for cfg in (mod.Config(), mod.Config(return_attn=True, scale=2.0)):
            out.append(g(x, w, mode, cfg))
    out.append(g(x, w, mode="both", cfg=mod.Config(True)))
    out += [k(x, w), k(x, w, False)]
    grad = jax.grad(lambda w: f(x, w, True)[1].sum() + g(x, w, "both", mod.Config(True))["hidden"].sum())
    out.append(grad(w))
    return out
