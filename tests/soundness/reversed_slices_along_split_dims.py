"""Slices with a negative step along a dim split over a mesh axis, static bounds of every kind (from the last entry,
negative, past either end, short of the ends, steps -2 to -4), were refused (MSH030: "a positive int step, or -1
over the whole dim") and now run as the positive slice of the same rows (re-blocked from the neighbours), flipped
(each block from its mirror device), matching one device, gradients included: over a 2x4 mesh (16 entries in
blocks of 4) and a 1x8 one (32 in blocks of 4).  Slices whose rows do not split into equal blocks (``x[:, 13:2:-1]``
takes 11) or take none stay refused: reversed_slice_not_dividing."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def rev(x: Tensor["batch", "d_ff"]) -> Tensor["batch", "d_ff"]:
    return x[:, 15::-1]


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def two_by_four(x: Tensor["batch", "d_ff"]):
    return (x[:, 100:-100:-1] * 2.0, x[:, ::-2], x[:, 13:1:-1], x[:, -5::-1], x[:, :3:-1], x[:, ::-4],
            jnp.tanh(x[:, 11:-16:-3]), x[7:0:-2, 13:1:-1], x[:, -1:-17:-2] + x[:, ::2])


@mesh(batch=1, model=8, rules={"d_ff": "model"})
def one_by_eight(x: Tensor["batch", "d_ff"]):
    return (x[:, 31::-1], x[:, 100:-100:-1], x[:, ::-2], x[:, 27:3:-1] * x[:, 4:28], x[:, 30::-4], x[:, -2::-2])


def inputs():
    rng = np.random.default_rng(71)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    return {"rev": (x,), "two_by_four": (x,), "one_by_eight": (rng.standard_normal((8, 32)).astype(np.float32),)}
