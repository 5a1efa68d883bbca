"""A ``@mesh`` function returning arrays or None as a static flag says, as real code does: ``(logits, aux if
cfg_aux else None)`` with ``aux`` a partial sum (completed in the array's arm: ``mr.psum(...) if aux else
None``), a name bound to ``jnp.sum(h, axis=0) if aux else None`` returned in a dict (completed where it is not
None), and a helper's ``aux_loss(h) if aux else None``.  Each out_spec is the array's: a PartitionSpec is a
pytree prefix of None too, so the same out_specs hold for both traces.  ``f`` runs with ``aux=True``, ``g`` (the
same body) with ``aux=False``; gradients of both.  Before: refused ("'col', an array or None known only when
traced ..., is returned by f()"), and without ``col``, ``mr.psum(a if aux else None, ...)`` crashed on None
('NoneType' object has no attribute 'dtype')."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def aux_loss(h):
    return jnp.mean(h ** 2)


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"], aux: bool = True):
    h = x @ w
    a = jnp.mean(jnp.tanh(h))
    col = jnp.sum(h, axis=0) if aux else None
    return jax.nn.relu(h), a if aux else None, {"col": col, "loss": aux_loss(h) if aux else None}


@mesh(batch=2, model=4, rules={"e": "model"})
def g(x: Tensor["batch", "d"], w: Tensor["d", "e"], aux: bool = False):
    h = x @ w
    a = jnp.mean(jnp.tanh(h))
    col = jnp.sum(h, axis=0) if aux else None
    return jax.nn.relu(h), a if aux else None, {"col": col, "loss": aux_loss(h) if aux else None}


def inputs():
    rng = np.random.default_rng(1409)
    x = rng.standard_normal((4, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 16)) / 3).astype(np.float32)
    return {"f": (x, w, True), "g": (x, w, False)}
