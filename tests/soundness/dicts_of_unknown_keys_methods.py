"""What real code does to a dict filled in a kept loop at keys meshify knows only when traced
(``outs[f"l{i}"] = h``), beyond reading it by key (``outs[f"l{i - 1}"]`` in the loop that fills it too) (was refused: ".get() of it is not modelled", "changes 'outs' in
place", "a key meshify does not know ... which holds no values here", "jax.tree.leaves of 'outs' ... a dict of keys known only when traced", "Dict over the pytree 'm'"):
``.get(k)`` tested ``is not None`` (both branches kept: present or not is known only when traced) and
``.get(k, default)`` (the default given the values' layout), ``.pop``, ``.setdefault``, ``.update`` from a display, from another such dict and from keywords (and of a dict of known keys),
``.keys()``, ``{**outs, "extra": y}`` returned by a helper and ``dict(outs, extra=y)``, ``jax.tree.leaves`` /
``jax.tree_util.tree_leaves`` / ``jax.tree.map`` of it (twelve layers: keys "l10" sort before "l2", as JAX
orders them), and an if on a size known only when traced that adds a key to a dict of known keys in one branch
(was the first branch's dict: a KeyError from the generated code, ``len`` and ``in`` decided while rewriting);
float16 accumulation and gradients through all of it."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def got(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        h = jax.nn.relu(x @ ws[i])
        if i > 0:  # a skip connection from the previous layer's stored output
            h = h + 0.5 * outs[f"l{i - 1}"]
        outs[f"l{i}"] = h
        x = x + h @ wo[i]
    last = outs.get(f"l{ws.shape[0] - 1}")
    if last is not None:
        x = x + last @ wo[0]
    missing = outs.get("nope", None)
    if missing is None:
        missing = jnp.zeros_like(outs["l0"])
    fallback = outs.get("nope", x @ ws[0])  # a partial sum as the default: completed first
    other = outs.get("l1", jnp.ones_like(outs["l0"]))
    return x, missing @ wo[0], fallback @ wo[1], other @ wo[2], x * len(list(outs.keys()))


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def changed(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        outs[f"l{i}"] = jax.nn.relu(x @ ws[i])
        x = x + outs[f"l{i}"] @ wo[i]
    first = outs.pop("l0")
    kept = outs.pop("nope", first * 2)
    same = outs.setdefault("l1", x @ ws[0])
    added = outs.setdefault("new", x @ ws[0])
    known = {"first": first}
    known.update(outs)
    known.update({"b": x @ ws[1], "c": first}, d=kept)
    outs.update(e=same)
    return x, outs, known, added @ wo[0]


def _with_extra(m, y):
    return {**m, "extra": y}


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def spread(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        h = jax.nn.relu(x @ ws[i])
        outs[f"l{i}"] = h
        x = x + h @ wo[i]
    y = jnp.tanh(x @ ws[0])
    a = _with_extra(outs, y)
    b = dict(outs, extra=y * 2)
    c = _with_extra({"p": x, "q": x * 2}, x * 3)
    total = jnp.zeros(())
    for k, v in sorted(a.items()):
        total = total + jnp.sum(v @ wo[0])
    return a, b, c, total * len(b)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def leaves(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        h = jax.nn.relu(x @ ws[i])
        outs[f"l{i}"] = h * (i + 1)
        x = x + h @ wo[i] * 0.2
    flat = jax.tree.leaves(outs)
    again = jax.tree_util.tree_leaves(outs)
    doubled = jax.tree.map(lambda v: v * 2, outs)
    squashed = jax.tree.map(jnp.tanh, outs)
    weighted = jnp.stack(flat).sum(0) * len(flat)
    return x, flat[1] @ wo[0], weighted, jnp.stack(again)[2], doubled, squashed, \
        sum(jnp.sum(v) for v in jax.tree.leaves(doubled))


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def key_added_under_if(x: Tensor["batch", "d"], w: Tensor["d", "d_ff"], wo: Tensor["d_ff", "d"]):
    m = {"a": x}
    m.update({"b": x * 3}, c=jnp.tanh(x))  # keys meshify knows: a dict of known keys still
    if x.shape[1] > 4:
        m["wide"] = x * 2
    if x.shape[1] > 100:
        m["huge"] = jax.nn.relu(x @ w) @ wo
    r = jnp.zeros_like(x)
    for k in sorted(m):
        r = r + m[k]
    return m, r * len(m), x * ("huge" in m), x * ("wide" in m)


def inputs():
    rng = np.random.default_rng(4211)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    ws = (rng.standard_normal((12, 8, 16)) * 0.3).astype(np.float32)
    wo = (rng.standard_normal((12, 16, 8)) * 0.3).astype(np.float32)
    half = (x.astype(np.float16), ws[:3].astype(np.float16), wo[:3].astype(np.float16))
    return {"got": (x.astype(np.float16), ws[:4].astype(np.float16), wo[:4].astype(np.float16)), "changed": half, "spread": (x, ws[:3], wo[:3]), "leaves": (x, ws, wo),
            "key_added_under_if": (x, ws[0], wo[0])}
