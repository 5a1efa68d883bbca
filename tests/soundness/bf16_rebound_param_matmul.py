"""x = x @ w with a bfloat16 x rebinding the parameter: the psum must cast back to x's dtype as
it was passed in (read once at the top), and the partial sums must accumulate in float32."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(model=8, rules={"d": "model"})
def f(x: Tensor["batch", "d"], w: Tensor["d", "e"]) -> Tensor["batch", "e"]:
    x = x @ w
    x = x * 2
    return x


def inputs():
    block = np.array([256.0, 1.0, -128.0, -128.0])
    x = np.tile(block, (2, 4))                        # [2, 16]: partial sums 257 and -256
    w = np.ones((16, 3))
    return (x.astype(jnp.bfloat16), w.astype(jnp.bfloat16))
