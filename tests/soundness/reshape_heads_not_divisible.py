"""x.reshape(B, n_heads, -1) with a head count (6) that the 'model' axis (4) does not divide."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"  # 6 heads cannot be split 4 ways: a MeshifyError naming 'heads'


@mesh(batch=2, model=4, rules={"d_model": "model", "heads": "model"})
def f(x: Tensor["batch", "d_model"], n_heads: int) -> Tensor["batch", "heads"]:
    B = x.shape[0]
    h: Tensor["batch", "heads", "d_head"] = x.reshape(B, n_heads, -1)
    return jnp.sum(h, axis=-1)


def inputs():
    return np.random.default_rng(62).standard_normal((4, 24)).astype(np.float32), 6
