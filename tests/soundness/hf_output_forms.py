"""HF's ways of handing results back, each through the flags that choose them: ``all_hidden += (h,)`` on
``() if output_hidden_states else None`` (a tuple: rebinding, never in place), ``dict(last=..., pooled=...)``, a
NamedTuple output whose unset fields are None, and ``tuple(v for v in [h, all_hidden, all_attn] if v is not
None)`` (the items differ: unrolled, each kept or dropped as its filter says).  Before: "a list changes in
place", "dict has no meshify rule", "field 'hidden' is a Python value", "a Python loop over a tuple whose items
have different layouts"."""
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Out(NamedTuple):
    last: jax.Array
    pooled: jax.Array
    hidden: Optional[tuple] = None
    attentions: Optional[tuple] = None


def layer(h, w, output_attentions):
    a = jax.nn.softmax(h @ w, axis=-1)
    h = jnp.tanh(a @ w.T) + h
    return (h, a) if output_attentions else (h,)


@mesh(batch=2, model=4, rules={"e": "model"})
def encoder(x: Tensor["batch", "d"], w: Tensor["d", "e"], output_hidden_states: bool = False,
            output_attentions: bool = False, return_dict: bool = True):
    all_hidden = () if output_hidden_states else None
    all_attn = () if output_attentions else None
    h = x
    for _ in range(2):
        if output_hidden_states:
            all_hidden += (h,)
        outs = layer(h, w, output_attentions)
        h = outs[0]
        if output_attentions:
            all_attn += (outs[1],)
    pooled = jnp.tanh(h[:, 0])
    if not return_dict:
        return tuple(v for v in [h, pooled, all_hidden, all_attn] if v is not None)
    return Out(last=h, pooled=pooled, hidden=all_hidden, attentions=all_attn)


@mesh(batch=8)
def as_dict(x: Tensor["batch", "d"]):
    return dict(last=jnp.tanh(x), pooled=x[:, 0])


def inputs():
    rng = np.random.default_rng(261)
    return {"encoder": (rng.standard_normal((4, 8)).astype(np.float32),
                        (rng.standard_normal((8, 8)) / 3).astype(np.float32)),
            "as_dict": (rng.standard_normal((8, 4)).astype(np.float32),)}


def scenario(mod, pick):
    """Every combination of the three flags, and the dict."""
    args = inputs()
    out = {"dict": pick(mod.as_dict)(*args["as_dict"])}
    for hidden in (False, True):
        for attn in (False, True):
            for as_dict in (False, True):
                out[f"{hidden}-{attn}-{as_dict}"] = pick(mod.encoder)(
                    *args["encoder"], output_hidden_states=hidden, output_attentions=attn, return_dict=as_dict)
    return out
