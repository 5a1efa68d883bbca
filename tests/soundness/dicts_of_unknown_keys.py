"""Dicts whose keys meshify does not know while rewriting, filled in a Python loop the generated code keeps
(``outs[f"layer{i}"] = h``, the trip count a dim's size known only when traced), as real code collects per-layer
intermediates (was refused: "a key meshify does not know while rewriting").  Every value shares one layout, so
the dict is one value of that layout: read back by key, gone over with ``.items()``, ``.values()``, ``.keys()``
and ``sorted(...)`` in kept loops, counted with ``len``, handed to a helper, made by a dict comprehension, kept
as the aux of ``jax.value_and_grad``, returned alone, in a tuple and in a dict (one PartitionSpec for the whole
dict).  Partial sums stored (the contraction over a split ``d_ff``) are completed before they go in, float16
accumulated in float32; a dict display's literal keys before the loop (and a literal store after it) of the
same layout join it; a store under an ``if`` in the loop; keys of ints and of tuples; and gradients through
all of it."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def collected(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        h = jax.nn.relu(x @ ws[i])
        outs[f"layer{i}"] = h
        x = x + h @ wo[i]
    return x, outs


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def partials_stored(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        outs[f"l{i}"] = jax.nn.relu(x @ ws[i]) @ wo[i]
        x = x + outs[f"l{i}"]
    return x, outs


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def gone_over(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        h = jax.nn.relu(x @ ws[i])
        outs[f"l{i}"] = h
        x = x + h @ wo[i]
    total = jnp.zeros(())
    for k, v in outs.items():
        total = total + jnp.sum(v * v)
    for v in outs.values():
        total = total + jnp.mean(v)
    for k in outs.keys():
        total = total + jnp.max(outs[k])
    for k in sorted(outs):
        total = total + jnp.sum(outs[k]) * 0.5
    for k, v in sorted(outs.items()):
        total = total - jnp.min(v)
    return x * len(outs), total, jnp.stack(list(outs.values())), sum(outs.values())


def _summary(d):
    t = 0.0
    for k, v in d.items():
        t = t + jnp.sum(v ** 2)
    return t, d


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def handed_on(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        h = jax.nn.relu(x @ ws[i])
        outs[f"l{i}"] = h
        x = x + h @ wo[i]
    t, same = _summary(outs)
    return {"y": x, "t": t, "inter": same, "means": {k: jnp.mean(v, axis=-1) for k, v in same.items()}}


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def mixed_keys(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {"embed": x}
    for i in range(ws.shape[0]):
        x = x + jax.nn.relu(x @ ws[i]) @ wo[i]
        outs[f"layer{i}"] = x
    outs["final"] = jnp.tanh(x)
    return outs, outs["embed"] * 2


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def stored_on_some(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        h = jax.nn.relu(x @ ws[i])
        if i % 2 == 0:
            outs[i] = h
        if (i - 1) in outs:
            h = h + outs[i - 1]
        x = x + h @ wo[i]
    return x, outs


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def two_loops(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for r in range(2):
        for i in range(ws.shape[0]):
            h = jax.nn.relu(x @ ws[i])
            outs[(r, i)] = h
            x = x + h @ wo[i] * 0.5
    return x, outs


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def aux_of_grad(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    def loss(ws, x):
        outs = {}
        for i in range(ws.shape[0]):
            h = jax.nn.relu(x @ ws[i])
            outs[f"l{i}"] = h
            x = x + h @ wo[i]
        return jnp.sum(x * x), outs

    (value, outs), g = jax.value_and_grad(loss, has_aux=True)(ws, x)
    return value, g, {k: jnp.mean(v) for k, v in outs.items()}


def inputs():
    rng = np.random.default_rng(4201)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    ws = (rng.standard_normal((3, 8, 16)) * 0.3).astype(np.float32)
    wo = (rng.standard_normal((3, 16, 8)) * 0.3).astype(np.float32)
    half = (x.astype(np.float16), ws.astype(np.float16), wo.astype(np.float16))
    return {"collected": (x, ws, wo), "partials_stored": half, "gone_over": (x, ws, wo), "handed_on": (x, ws, wo),
            "mixed_keys": (x, ws, wo), "stored_on_some": (x, ws, wo), "two_loops": (x, ws, wo),
            "aux_of_grad": (x, ws, wo)}
