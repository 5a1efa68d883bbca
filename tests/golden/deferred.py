import jax.numpy as jnp
import jax
from meshify import Tensor, mesh


@mesh(model=4, rules="d_in:model")
def two_heads(x: Tensor["batch", "d_in"],
              wa: Tensor["d_in", "d_out"],
              wb: Tensor["d_in", "d_out"]) -> Tensor["batch", "d_out"]:
    # Both contractions are partial over 'model'; the sum stays partial: one psum, late.
    a = x @ wa
    b = jnp.dot(x, wb)
    s = 0.5 * (a + b)
    return jax.nn.gelu(s)


@mesh(model=4, rules={"d_in": "model", "d_out": "model"})
def scatter_out(x: Tensor["batch", "d_in"],
                w: Tensor["d_in", "d_hidden"]) -> Tensor["batch", "d_hidden"]:
    # The output wants no split, so psum.
    return x @ w


@mesh(data=2, model=4, rules={"d_in": "model", "seq": "model", "batch": "data"})
def sequence_parallel(x: Tensor["batch", "length", "d_in"],
                      w: Tensor["d_in", "d_out"]) -> Tensor["batch", "seq", "d_out"]:
    # Renaming 'length' to 'seq' (split over 'model') turns the psum into a psum_scatter.
    y: Tensor["batch", "seq", "d_out"] = jnp.einsum("bli,io->blo", x, w)
    return y
