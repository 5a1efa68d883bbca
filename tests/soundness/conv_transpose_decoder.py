"""A decoder's upsampling by ``jax.lax.conv_transpose`` (default and explicit dimension_numbers,
``transpose_kernel=True``, a VAE decoder's stride 2): the batch split over 'batch' (local), the output features
split over 'model' (the kernel's split stays split) and the input features split (a partial sum, completed before
the nonlinearity).  Before, "jax.lax.conv_transpose has no meshify rule" with a fix dropping data parallelism (the
VAE attack)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=8)
def up(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "c", "o"]):
    return jax.nn.gelu(jax.lax.conv_transpose(x, k, (2, 2), "SAME"))


@mesh(batch=2, model=4, rules={"o": "model"})
def up_out_split(x: Tensor["batch", "c", "h", "w"], k: Tensor["o", "c", "kh", "kw"]):
    y = jax.lax.conv_transpose(x, k, (2, 2), "VALID", dimension_numbers=("NCHW", "OIHW", "NCHW"))
    return jnp.tanh(y).sum(axis=(2, 3))


@mesh(batch=2, model=4, rules={"c": "model"})
def up_in_split(x: Tensor["batch", "h", "w", "c"], k: Tensor["kh", "kw", "o", "c"]):
    y = jax.lax.conv_transpose(x, k, (2, 2), "SAME", transpose_kernel=True)
    return jax.nn.relu(y)


def inputs():
    rng = np.random.default_rng(67)
    x = rng.standard_normal((8, 3, 3, 4)).astype(np.float32)
    return {"up": (x, rng.standard_normal((3, 3, 4, 2)).astype(np.float32) / 3),
            "up_out_split": (rng.standard_normal((4, 4, 3, 3)).astype(np.float32),
                             rng.standard_normal((8, 4, 2, 2)).astype(np.float32) / 3),
            "up_in_split": (rng.standard_normal((4, 3, 3, 8)).astype(np.float32),
                            rng.standard_normal((3, 3, 2, 8)).astype(np.float32) / 3)}
