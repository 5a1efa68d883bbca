"""A Python loop whose carry has a reshape's inferred dim (``x = img.reshape(b, h * w, c)``: 'height_width?')
that the body lines up with a hinted weight's 'patches' (an MLP-Mixer's token mixing): the carry enters
the loop under the body's name, no hint needed.  Before, "the layout of 'x' changes across iterations",
with a fix naming a dim 'height_width?' that no hint may spell."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_tok": "model"})
def f(img: Tensor["batch", "height", "width", "d_model"], w1: Tensor["patches", "d_tok"],
      w2: Tensor["d_tok", "patches"]) -> Tensor["batch", "d_model"]:
    b, h, w, c = img.shape
    x = img.reshape(b, h * w, c)
    for _ in range(2):
        x = x + jnp.swapaxes(jnp.tanh(jnp.swapaxes(x, 1, 2) @ w1) @ w2, 1, 2)
    return x.mean(axis=1)


def inputs():
    rng = np.random.default_rng(6)
    return (rng.standard_normal((2, 2, 2, 8)).astype(np.float32), (rng.standard_normal((4, 8)) * 0.3).astype(np.float32),
            (rng.standard_normal((8, 4)) * 0.3).astype(np.float32))
