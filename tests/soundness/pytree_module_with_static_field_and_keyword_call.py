"""An Equinox-style attention module: a registered dataclass with a static field (``n_heads`` in
``meta_fields``), called with a keyword argument that may be None (``a(x, mask=mask)``, ``a(x)``), its
``__call__`` calling a module-level helper and reshaping its split features into heads."""
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def rms(x, scale):
    return x * jax.lax.rsqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6) * scale


@functools.partial(jax.tree_util.register_dataclass, data_fields=["wq", "wo", "scale"], meta_fields=["n_heads"])
@dataclasses.dataclass
class Attn:
    wq: Tensor["d", "q"]
    wo: Tensor["q", "d"]
    scale: Tensor["d"]
    n_heads: int

    def __call__(self, x, mask=None):
        B, L, _ = x.shape
        h = rms(x, self.scale)
        q = (h @ self.wq).reshape(B, L, self.n_heads, -1)
        s = jnp.einsum("blhd,bmhd->bhlm", q, q)
        if mask is not None:
            s = jnp.where(mask, s, -1e9)
        o = jnp.einsum("bhlm,bmhd->blhd", jax.nn.softmax(s, -1), q).reshape(B, L, -1)
        return x + o @ self.wo


@mesh(batch=2, model=4, rules={"q": "model"})
def f(a: Attn, x: Tensor["batch", "length", "d"]) -> Tensor["batch", "length", "d"]:
    L = x.shape[1]
    mask = jnp.tril(jnp.ones((L, L), bool))
    return a(x, mask=mask) + a(x)


def inputs():
    rng = np.random.default_rng(3608)

    def a(*shape):
        return (rng.standard_normal(shape) * 0.3).astype(np.float32)

    return Attn(a(16, 16), a(16, 16), a(16) + 1, 8), a(4, 8, 16)
