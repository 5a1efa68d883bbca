"""One params class for two uses with different dims, as an MLP-Mixer writes its token and channel MLPs:
``Mlp`` hints ``d_in``/``d_hidden`` once, and each field renames them with
``Annotated[Mlp, {"d_in": "patch", "d_hidden": "tok_ff"}]``; the blocks are a ``tuple[Block, ...]`` looped
over, the helper ``mlp(p, x)`` is hinted ``p: Mlp`` (its versions see the renamed dims), ``tok_ff`` and
``d_ff`` are split over 'model' and the batch over 'data'; gradients through x and every weight.  Before,
the contraction refused 'patch' against 'd_in' and the fix said to write a class per use."""
from typing import Annotated, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


class Mlp(NamedTuple):
    w1: Tensor["d_in", "d_hidden"]
    b1: Tensor["d_hidden"]
    w2: Tensor["d_hidden", "d_in"]


class Block(NamedTuple):
    token_mlp: Annotated[Mlp, {"d_in": "patch", "d_hidden": "tok_ff"}]
    channel_mlp: Annotated[Mlp, {"d_in": "d_model", "d_hidden": "d_ff"}]
    scale: Tensor["d_model"]


def mlp(p: Mlp, x):
    return jax.nn.gelu(x @ p.w1 + p.b1) @ p.w2


@mesh(data=2, model=4, rules={"batch": "data", "tok_ff": "model", "d_ff": "model"})
def f(x: Tensor["batch", "patch", "d_model"], blocks: tuple[Block, ...],
      head: Annotated[Mlp, {"d_in": "d_model", "d_hidden": "classes"}]) -> Tensor["batch", "d_model"]:
    for b in blocks:
        y = jnp.swapaxes(x * b.scale, 1, 2)
        x = x + jnp.swapaxes(mlp(b.token_mlp, y), 1, 2)
        x = x + mlp(b.channel_mlp, x * b.scale)
    return mlp(head, jnp.mean(x, axis=1))


def inputs():
    rng = np.random.default_rng(15)

    def mlp_params(d_in, d_hidden):
        return Mlp(*(rng.standard_normal(s).astype(np.float32) * 0.3 for s in ((d_in, d_hidden), (d_hidden,),
                                                                              (d_hidden, d_in))))

    blocks = tuple(Block(mlp_params(6, 8), mlp_params(12, 16), rng.standard_normal(12).astype(np.float32))
                   for _ in range(2))
    return rng.standard_normal((4, 6, 12)).astype(np.float32), blocks, mlp_params(12, 5)
