"""Sequence parallelism through jax.lax.associative_scan, as the LRU/S5 code writes it: the decay is a
``jnp.repeat``ed (or ``jnp.broadcast_to``) leaf, whole along the scanned length, beside inputs whose length is
split over the mesh.  The whole leaf is sliced to each device's block (a local slice, or an all_to_all where its
own hidden dim is on the axis the length takes), then each device scans its block and folds in the totals of the
blocks before it (``mr.associative_scan``).  Forward and ``reverse=True``, a name bound to the tuple and a tuple
literal, ``axis=1`` of a batch-first layout, three leaves, a nested tuple and a list, on 2x4 and 1x8 meshes, gradients
included.  Before:
MSH030 "leaves of 'elems' are split otherwise along the scanned dim"."""

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def binary_operator_diag(element_i, element_j):
    a_i, bu_i = element_i
    a_j, bu_j = element_j
    return a_j * a_i, a_j * bu_i + bu_j


@mesh(batch=2, model=4, rules={"length": "model", "d_hidden": "model"})
def lru(nu_log: Tensor["d_hidden"], u: Tensor["batch", "length", "d_hidden"]):
    """The decay's d_hidden on 'model' too: sliced along length by an all_to_all."""
    lam = jnp.exp(-jnp.exp(nu_log))

    def one(x):
        lam_elements = jnp.repeat(lam[None, ...], x.shape[0], axis=0)
        elements = (lam_elements, x)
        _, h = jax.lax.associative_scan(binary_operator_diag, elements)
        _, back = jax.lax.associative_scan(binary_operator_diag, elements, reverse=True)
        return jnp.concatenate((h, back), axis=-1)

    return jax.vmap(one)(u)


@mesh(batch=1, model=8, rules={"length": "model"})
def lru8(nu_log: Tensor["d_hidden"], u: Tensor["batch", "length", "d_hidden"]):
    """On 1x8, the batch axis kept (axis=1), the decay broadcast to the inputs' shape, written in the call."""
    lam = jnp.exp(-jnp.exp(nu_log))
    decay = jnp.broadcast_to(lam, u.shape)
    _, h = jax.lax.associative_scan(binary_operator_diag, (decay, u), axis=1)
    _, back = jax.lax.associative_scan(binary_operator_diag, (decay, u * 0.5), reverse=True, axis=1)
    return h * back


@mesh(batch=2, model=4, rules={"length": "model"})
def three(g: Tensor["d"], u: Tensor["batch", "length", "d"], v: Tensor["batch", "length", "d"]):
    """Three leaves, the whole one in the middle: (gate, decay, input) composed as (g1 g2, a1 a2, a2 b1 + b2)."""
    decay = jnp.broadcast_to(jax.nn.sigmoid(g), u.shape)

    def combine(left, right):
        return left[0] * right[0], left[1] * right[1], right[1] * left[2] + right[2]

    gate, _, h = jax.lax.associative_scan(combine, (jnp.tanh(v) * 0.5 + 1.0, decay, u), axis=-2)
    return gate + h


@mesh(batch=2, model=4, rules={"length": "model"})
def nested(lam: Tensor["d"], u: Tensor["batch", "length", "d"]):
    """A nested tuple ((decay, gate), input) and a list [decay, input] (the list kept a list), reversed."""
    decay = jnp.broadcast_to(lam, u.shape)

    def pairs(left, right):
        (a1, g1), b1 = left
        (a2, g2), b2 = right
        return (a1 * a2, g1 + g2), a2 * b1 + b2

    (_, g), h = jax.lax.associative_scan(pairs, ((decay, u * 0.1), u), axis=1)
    listed = jax.lax.associative_scan(lambda x, y: [x[0] * y[0], y[0] * x[1] + y[1]], [decay, u], reverse=True,
                                      axis=1)
    return g + h * listed[1]


def inputs():
    rng = np.random.default_rng(36)
    nu_log = rng.uniform(-1.0, 0.5, size=(8,)).astype(np.float32)
    u = rng.normal(size=(4, 16, 8)).astype(np.float32)
    return {"lru": (nu_log, u), "lru8": (nu_log, u[:2]),
            "nested": (rng.uniform(0.5, 1.0, size=(8,)).astype(np.float32), u),
            "three": (rng.normal(size=(8,)).astype(np.float32), u, rng.normal(size=(4, 16, 8)).astype(np.float32))}
