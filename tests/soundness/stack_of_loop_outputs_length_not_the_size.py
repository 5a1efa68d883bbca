"""A list filled every other step, ``for t in range(0, T, 2)``, stacked and reshaped as if it held every step,
``jnp.stack(outs, 1).reshape(B, T, H * N // 2)`` of [batch, outs, heads, N] with the heads split (see
stack_of_loop_outputs_merged_with_heads): meshify takes ``T`` to keep the stacked dim (a split dim enters a merge
only as its major part), but it has T / 2 rows, and one device cuts each step's heads into two rows of time, which
the heads' blocks cannot do.  Refused when the function runs (``mr.kept_dims``: size 6 keeps dim 1, which is 3)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"attn": "model", "heads": "model"})
def f(x: Tensor["batch", "time", "d"], wr: Tensor["d", "attn"], td: Tensor["heads", "hs"]):
    B, T, _ = x.shape
    H, N = td.shape
    r = (x @ wr).reshape(B, T, H, N)
    outs = []
    for t in range(0, T, 2):
        outs.append(r[:, t] * td)
    return jnp.sum(jnp.stack(outs, 1).reshape(B, T, H * N // 2) ** 2, axis=-1)


def inputs():
    rng = np.random.default_rng(22)
    return (rng.standard_normal((4, 6, 16)).astype(np.float32), rng.standard_normal((16, 32)).astype(np.float32),
            rng.standard_normal((8, 4)).astype(np.float32))
