"""jnp.pad(mode="reflect" | "symmetric") along a split spatial dim (a conv's padding in image and audio code,
torch's ReflectionPad2d ported): the border blocks mirror their own rows (reflect leaving the edge row out,
symmetric repeating it), the others take the neighbour's halo; uneven pads (3, 1), a pad of both split dims of
a 2-D split image, and a reflect pad as wide as one block less a row.  Before: 'mode="reflect" is not modelled
along a split dim', with a fix to unsplit the dim."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def mirror(x):
    a = jnp.pad(x, ((0, 0), (2, 2), (1, 1), (0, 0)), mode="reflect")
    b = jnp.pad(x, ((0, 0), (1, 3), (0, 0), (0, 0)), mode="symmetric")
    c = jnp.pad(x, ((0, 0), (3, 1), (2, 0), (0, 0)), mode="reflect")
    return jnp.tanh(a[:, 1:-3, 1:-1] * 2.0) + b[:, :-4] * c[:, 4:, 2:]


@mesh(batch=2, model=4, rules={"h": "model"})
def f(x: Tensor["batch", "h", "w", "c"]) -> Tensor["batch", "h", "w", "c"]:
    return mirror(x)


@mesh(batch=8, rules={"h": "batch", "batch": None})
def g(x: Tensor["batch", "h", "w", "c"]) -> Tensor["batch", "h", "w", "c"]:
    a = jnp.pad(x, ((0, 0), (3, 5), (0, 0), (0, 0)), mode="reflect")
    b = jnp.pad(x, ((0, 0), (2, 6), (0, 0), (0, 0)), mode="symmetric")
    return a[:, 5:-3] * b[:, 2:-6] + a[:, :-8]


@mesh(batch=2, h=2, w=2)
def image(x: Tensor["batch", "h", "w", "c"]) -> Tensor["batch", "h", "w", "c"]:
    y = jnp.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)), mode="symmetric")
    z = jnp.pad(x, ((0, 0), (2, 2), (2, 2), (0, 0)), mode="reflect")
    return y[:, 4:, :-4] - z[:, :-4, 4:] * 0.5


def inputs():
    rng = np.random.default_rng(3211)
    return {"f": (rng.standard_normal((4, 16, 6, 3)).astype(np.float32),),
            "g": (rng.standard_normal((2, 64, 6, 2)).astype(np.float32),),
            "image": (rng.standard_normal((4, 8, 8, 2)).astype(np.float32),)}
