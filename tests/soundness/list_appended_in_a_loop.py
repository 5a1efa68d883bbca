"""A list the function builds by appending in a Python loop (``hidden = []``, ``hidden.append(x)``: hidden states
collected per layer, each expert's output, a partial sum per layer), read by ``jnp.stack``, ``jnp.concatenate``,
``sum``, ``hidden[-1]`` and a loop over it.  Was refused ("a Python list of arrays built up statement by
statement is not modelled").  ``partials`` appends partial sums (completed before they are appended) in
float16 too; ``before`` appends to a list that already holds an item before the loop; ``per_iteration`` makes its list in
the loop's body (held item by item) and stacks a name holding ``jnp.split``'s pieces; ``returned``
returns the list beside the output (every hidden state, as ``output_hidden_states=True`` does)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"
TOL = 2e-2


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def stacked(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"],
            w2: Tensor["layers", "d_ff", "d_model"]):
    hidden = []
    for i in range(w1.shape[0]):
        x = x + jax.nn.relu(x @ w1[i]) @ w2[i]
        hidden.append(x)
    everything = jnp.stack(hidden, axis=1)
    return everything.sum(1) * 0.5 + hidden[-1] + sum(hidden) + jnp.concatenate(hidden, -1)[:, :4].sum(-1)[:, None]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def partials(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"],
             w2: Tensor["layers", "d_ff", "d_model"]):
    outs = []
    for i in range(w1.shape[0]):
        outs.append(jax.nn.gelu(x @ w1[i]) @ w2[i])
    total = jnp.zeros_like(x)
    for o in outs:
        total = total + o * 2
    return total + jnp.stack(outs).max(0)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def before(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"],
           w2: Tensor["layers", "d_ff", "d_model"]):
    hs = [x]
    for i in range(w1.shape[0]):
        h = jnp.tanh(x @ w1[i])
        hs.append(x + h @ w2[i])
    hs.append(x * 3)
    return jnp.stack(hs, -1).mean(-1) * len(hs)


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def returned(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"],
             w2: Tensor["layers", "d_ff", "d_model"]):
    hidden_states = [x]
    for i in range(w1.shape[0]):
        x = x + jnp.tanh(x @ w1[i]) @ w2[i]
        hidden_states.append(x)
    return x, hidden_states


def inputs():
    rng = np.random.default_rng(441)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w1 = (rng.standard_normal((3, 8, 16)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((3, 16, 8)) * 0.3).astype(np.float32)
    half = tuple(a.astype(np.float16) for a in (x, w1, w2))
    return {"stacked": (x, w1, w2), "partials": half, "before": (x, w1, w2), "per_iteration": (x, w1), "returned": (x, w1, w2)}



@mesh(batch=2, model=4, rules={"d_ff": "model"})
def per_iteration(x: Tensor["batch", "d_model"], w1: Tensor["layers", "d_model", "d_ff"]):
    out = x
    for i in range(w1.shape[0]):
        parts = []
        parts.append(x @ w1[i])
        parts.append(jnp.tanh(x) @ w1[i])
        halves = jnp.split(x, 2, -1)
        out = out + jnp.stack(parts).sum(0).sum(-1, keepdims=True) + jnp.concatenate(halves, -1)
    return out
