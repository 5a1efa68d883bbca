"""Helpers returning an array or None known only when traced, as real code writes them: ``make_mask`` returns
``causal if shift > 0 else None``, ``attention(x, w, mask=None)`` returns ``out, mask``, ``bias_of`` returns
None on one path and a partial sum on the other; the caller tests ``if m is None:`` (both branches kept, each
with a collective of its own) and returns the array or None from the ``@mesh`` function (its out_spec the
array's; a partial sum completed where it is not None).  ``f`` runs with ``shift=1`` (arrays), ``g`` with
``shift=0`` (None when traced).  Before: returning ``bias_of``'s None was refused ("returns values of different
dims on different paths"); without it, ``make_mask``'s result was taken for an array ("'mask is not None' is True
in this version") and the other branch left unrewritten (here a raw JAX error for ``g``; a local mean, wrong
numbers, where nothing else stops it); and where the caller made the mask itself (``mask = ... if shift > 0 else
None``), returning it from ``attention`` was refused ("is returned by attention()")."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def make_mask(x, shift):
    n = x.shape[1]
    return jnp.tril(jnp.ones((n, n), x.dtype), -shift) * -1e4 if shift > 0 else None


def bias_of(h, shift):
    if shift == 0:
        return None
    return jnp.mean(h, axis=(0, 1))


def attention(x, w, mask=None):
    q = x @ w
    s = jnp.einsum("bse,bte->bst", q, q) / 4.0
    if mask is not None:
        s = s + mask
    else:
        s = s - jnp.mean(s)
    return jax.nn.softmax(s, axis=-1) @ x, mask


def block(x, w, shift):
    mask = make_mask(x, shift)
    out, m = attention(x, w, mask)
    if m is None:
        out = out + jnp.mean(x)
    else:
        out = out * 2.0 + jnp.sum(m) * 1e-6
    return out, bias_of(out, shift)


@mesh(batch=2, model=4, rules={"e": "model"})
def f(x: Tensor["batch", "seq", "d"], w: Tensor["d", "e"], shift: int = 1):
    out, b = block(x, w, shift)
    return out, b


@mesh(batch=2, model=4, rules={"e": "model"})
def g(x: Tensor["batch", "seq", "d"], w: Tensor["d", "e"], shift: int = 0):
    return block(x, w, shift)


def inputs():
    rng = np.random.default_rng(1403)
    x = rng.standard_normal((4, 6, 8)).astype(np.float32)
    w = (rng.standard_normal((8, 16)) / 3).astype(np.float32)
    return {"f": (x, w, 1), "g": (x, w, 0)}
