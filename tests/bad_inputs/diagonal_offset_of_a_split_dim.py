# Bad input: an off-main diagonal of a batch-by-batch matrix whose rows are split: its entries cross the devices'
# blocks (the main diagonal, offset 0, is taken blockwise).
# expect: UnsupportedError at 12:12 naming offset 1 of split 'batch'
import jax
import jax.numpy as jnp
from meshify import Tensor, mesh


@mesh(batch=8)
def f(img: Tensor["batch", "embed"], txt: Tensor["batch", "embed"]):
    logits = img @ txt.T
    return jnp.diagonal(logits, offset=1).sum()
