"""A U-Net's skip connections: ``hs = [x]``, ``hs.append(h)`` on the way down, ``skip = hs.pop()`` on the way
up, with height and width split (halo convolutions), and a last ``hs.pop()`` after the loops; ``straight``
pops outside any loop (the last item, then the one before: layouts item by item), also ``pop(-1)``.  Was
refused (appending to a list of split arrays was not modelled)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def conv(x, k):
    return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


@mesh(rows=2, cols=4, rules={"h": "rows", "w": "cols"})
def unet(x: Tensor["batch", "h", "w", "ch"], down: Tensor["layers", "kh", "kw", "ch", "ch"],
         up: Tensor["layers", "kh", "kw", "ch", "ch"]):
    hs = [x]
    h = x
    for i in range(down.shape[0]):
        h = jax.nn.relu(conv(h, down[i]))
        hs.append(h)
    for i in range(up.shape[0]):
        skip = hs.pop()
        h = jax.nn.relu(conv(h + skip * 0.5, up[i]))
    return h + hs.pop()


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def straight(x: Tensor["batch", "d_model"], w: Tensor["d_model", "d_ff"]):
    parts = [x @ w]
    parts.append(x * 2)
    last = parts.pop(-1)
    first = parts.pop()
    return first.sum(-1) + last.sum(-1)


def inputs():
    rng = np.random.default_rng(446)
    x = rng.standard_normal((2, 16, 16, 4)).astype(np.float32)
    down = (rng.standard_normal((2, 3, 3, 4, 4)) * 0.2).astype(np.float32)
    up = (rng.standard_normal((2, 3, 3, 4, 4)) * 0.2).astype(np.float32)
    return {"unet": (x, down, up),
            "straight": (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32))}
