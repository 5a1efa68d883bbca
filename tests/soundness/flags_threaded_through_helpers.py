"""HF-style static flags threaded through helpers, whose results change with them: a layer returning
``(h, a) if output_attentions else (h,)`` or building ``outputs = (h,)`` then ``outputs += (a,)``; the caller
collecting ``all_attn = () if output_attentions else None`` and ``all_hidden += (x,)``, returning them or None.
meshify cannot write one program for every value here (the results differ), so it rewrites the function
once per value of its bool flags (``@f.variant``s, chosen per call); a value other than True or False is
refused at the call."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def attention_layer(x, w, v, output_attentions=False):
    a = jax.nn.softmax(x @ w, axis=-1)
    h = a @ v
    outputs = (h, a) if output_attentions else (h,)
    return outputs


def mlp_layer(x, w, v, output_hidden=False):
    h = jax.nn.gelu(x @ w)
    outputs = (h @ v,)
    if output_hidden:
        outputs += (h,)
    return outputs


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: tuple[Tensor["d", "d_ff"], ...], vs: tuple[Tensor["d_ff", "d"], ...],
      output_attentions: bool = False, output_hidden_states: bool = False):
    all_attn = () if output_attentions else None
    all_hidden = () if output_hidden_states else None
    for w, v in zip(ws, vs):
        if output_hidden_states:
            all_hidden = all_hidden + (x,)
        outputs = attention_layer(x, w, v, output_attentions=output_attentions)
        x = x + outputs[0]
        if output_attentions:
            all_attn = all_attn + (outputs[1],)
        x = x + mlp_layer(x, w, v)[0]
    return x, all_attn, all_hidden


@mesh(batch=8)
def g(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"], v: Tensor["d_ff", "d"], output_hidden: bool = True):
    out = mlp_layer(x, w, v, output_hidden)
    return out


def inputs():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(8, 8)).astype(np.float32)
    ws = tuple((rng.normal(size=(8, 16)) * 0.3).astype(np.float32) for _ in range(3))
    vs = tuple((rng.normal(size=(16, 8)) * 0.3).astype(np.float32) for _ in range(3))
    return {"f": (x, ws, vs), "g": (x, ws[0], vs[0])}


def scenario(mod, pick):
    x, ws, vs = inputs()["f"]
    f, g = pick(mod.f), pick(mod.g)
    out = [f(x, ws, vs), f(x, ws, vs, True), f(x, ws, vs, output_hidden_states=True), f(x, ws, vs, True, True),
           g(x, ws[0], vs[0]), g(x, ws[0], vs[0], False)]
    jf = jax.jit(f, static_argnames=("output_attentions", "output_hidden_states"))
    out.append(jf(x, ws, vs, output_attentions=True))
    loss = lambda ws: f(x, ws, vs, True, True)[1][0].sum() + f(x, ws, vs)[0].sum()  # noqa: E731
    out.append(jax.grad(loss)(ws))
    return out
