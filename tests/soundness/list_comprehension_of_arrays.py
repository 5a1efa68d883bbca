"""List comprehensions and generator expressions over arrays, as model code writes them: each expert's (or
layer's) output ``[relu(x @ w1[i]) @ w2[i] for i in range(L)]`` (a partial sum, completed in the element),
``jnp.stack([norm(h) for h in hidden])`` over a list appended in a loop, ``sum(h * h for h in parts)`` over a
tuple, ``zip`` and ``enumerate``, and Python values read off a split dim (``[d * 2 for d in x.shape]``: global
sizes).  Was refused ("ListComp over array 'x' is not supported")."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


def norm(h):
    return h / jnp.sqrt(jnp.mean(h * h, axis=-1, keepdims=True) + 1e-6)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def experts(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"],
            w2: Tensor["layers", "d_ff", "d_model"]):
    outs = [jax.nn.relu(x @ w1[i]) @ w2[i] for i in range(w1.shape[0])]
    hidden = []
    for o in outs:
        x = x + o
        hidden.append(x)
    parts = jnp.split(x, 2, axis=-1)
    total = sum(h * h for h in parts)
    mixed = [o * (i + 1) for i, o in enumerate(outs)]
    paired = [a - b for a, b in zip(outs, mixed)]
    sizes = [d * 2 for d in x.shape]
    return jnp.stack([norm(h) for h in hidden]).sum(0) + jnp.stack(paired).mean(0) + total.sum() / sizes[0]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def half(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"]):
    return jnp.stack([jnp.tanh(x @ w) for w in w1], axis=1).sum(-1)


def inputs():
    rng = np.random.default_rng(452)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w1 = (rng.standard_normal((3, 8, 16)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((3, 16, 8)) * 0.3).astype(np.float32)
    return {"experts": (x, w1, w2), "half": (x.astype(np.float16), w1.astype(np.float16))}
