"""Dicts carried by a Python loop over a list of unknown length, their values partial sums (``ff`` split: ``x @ w``
is one) or changed by the body:

- ``acts.get(i - 1, x)`` read in the loop that fills ``acts = {}`` at the counter's keys, then contracted after it
  (was refused: "the default of acts.get(), a dict whose every value is a Static");
- ``d = {"acc": x @ w}`` then ``d["acc"] = d["acc"] + h @ w``: the body was rewritten for a partial ``d["acc"]``
  and completed it at the store, so the second iteration psummed the completed sum again (wrong numbers, silent);
  now a store at a string key keeps the partial sum (as the display does): one psum, after the loop;
- ``d["acc"] = jnp.tanh(d["acc"]) + h @ w``: the body needs it whole, so it is completed before the loop (was the
  same silent double count); ``d = {**d, "acc": h @ w}``: left partial where it entered whole, completed at the end
  of the body; ``d["n"] = d["n"] + 1``: a Python value that changes; ``d.update(acc=...)``;
- float32 and bfloat16 (the psum casting back to the dtype one device gives the sum of every iteration's terms)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2  # (bfloat16)


@mesh(batch=2, model=4, rules={"ff": "model"})
def chain(x: Tensor["batch", "ff"], ws: list[Tensor["ff", "ff"]], w_out: Tensor["ff", "d"]):
    acts = {}
    for i, w in enumerate(ws):
        prev = acts.get(i - 1, x)
        acts[i] = jnp.tanh(prev @ w)
    return acts[len(ws) - 1] @ w_out


@mesh(batch=2, model=4, rules={"ff": "model"})
def display(x: Tensor["batch", "ff"], w: Tensor["ff", "d"], hs: list[Tensor["batch", "ff"]]):
    d = {"acc": x @ w, "n": 0}
    for h in hs:
        d["n"] = d["n"] + 1
        d["acc"] = d["acc"] + h @ w * d["n"]
    return d["acc"]


@mesh(batch=2, model=4, rules={"ff": "model"})
def nonlinear(x: Tensor["batch", "ff"], w: Tensor["ff", "d"], hs: list[Tensor["batch", "ff"]]):
    d = {"acc": x @ w}
    for h in hs:
        d["acc"] = jnp.tanh(d["acc"]) + h @ w
    return d["acc"]


@mesh(batch=2, model=4, rules={"ff": "model"})
def spread(x: Tensor["batch", "ff"], w: Tensor["ff", "d"], hs: list[Tensor["batch", "ff"]]):
    d = {"acc": x @ w, "last": jnp.tanh(x @ w)}
    for h in hs:
        d = {**d, "acc": d["acc"] + h @ w}
    e = {"acc": jnp.tanh(x @ w)}
    for h in hs:
        e = {**e, "acc": jnp.sin(e["acc"]) + h @ w}
        e = {**e, "acc": h @ w * 0.5}
    return d, e["acc"]


@mesh(batch=2, model=4, rules={"ff": "model"})
def updated(x: Tensor["batch", "ff"], w: Tensor["ff", "d"], hs: list[Tensor["batch", "ff"]]):
    d = {"acc": x @ w}
    for h in hs:
        d.update(acc=d["acc"] + h @ w)
    return d["acc"] * 2.0


def inputs():
    rng = np.random.default_rng(61)

    def r(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    x, w, hs = r(4, 16), r(16, 8, scale=0.3), [r(4, 16) for _ in range(3)]
    ws = [r(16, 16, scale=0.3) for _ in range(3)]
    low = (jnp.asarray(x, jnp.bfloat16), jnp.asarray(w, jnp.bfloat16), [jnp.asarray(h, jnp.bfloat16) for h in hs])
    return {"chain": (x, ws, w), "display": (x, w, hs), "nonlinear": (x, w, hs), "spread": low,
            "updated": (low[0], low[1], hs)}
