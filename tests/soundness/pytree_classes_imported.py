"""Parameter classes imported from another module of the tree (``from tests.soundness._imported_types import
Params``, ``import ... as T`` + ``T.Ffn``): their fields' hints read in that module, a nested class the importing
module never names (``Block``) carried in by an import in the converted file.  Before, "cannot infer the dims of
p['w1']" (the classes' fields were not read)."""
import jax
import numpy as np

import tests.soundness._imported_types as T
from meshify import Tensor, mesh
from tests.soundness._imported_types import Params

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model", "vocab": "model"})
def f(x: Tensor["batch", "d_model"], p: Params, extra: T.Ffn):
    for b in p.blocks:
        x = x + jax.nn.gelu(x @ b.ffn["w1"]) @ b.ffn["w2"] * b.scale
    x = x + jax.nn.relu(x @ extra["w1"]) @ extra["w2"]
    return jax.nn.log_softmax(x @ p.head, axis=-1)


def inputs():
    rng = np.random.default_rng(23)

    def r(*shape):
        return (0.3 * rng.standard_normal(shape)).astype(np.float32)

    def ffn():
        return T.Ffn(w1=r(8, 16), w2=r(16, 8))

    blocks = tuple(T.Block(ffn(), 1 + r(8)) for _ in range(2))
    return r(4, 8), Params(blocks, r(8, 32)), ffn()
