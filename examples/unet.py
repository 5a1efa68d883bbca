"""A small U-Net on images split over height and width (spatial parallelism), trained with optax.

Each of the 2x4 devices holds one 16x8 tile of every 32x32 image (height over mesh axis ``rows``,
width over ``cols``).  meshify writes the communication out: each 3x3 convolution exchanges a
one-pixel halo with the neighbouring tiles (rows, columns and corners, zeros at the image border),
the 2x2 max pools line up with the tiles and need nothing, upsampling (``jnp.repeat``) and the
skip concatenations along channels are local, group norm sums locally and psums its statistics
over the tiles, and the loss is one psum.

    python examples/unet.py --steps 5              # train on a 2x4 mesh of simulated CPU devices
    python examples/unet.py --steps 5 --reference  # and compare with one-device training
    meshify diff examples/unet.py                  # the generated shard_map program
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Annotated, NamedTuple

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh
from meshify.runtime import simulate_cpu_devices

simulate_cpu_devices(8)  # before any JAX operation

GROUPS = 4
SIZES = {"batch": 4, "h": 32, "w": 32, "c": 3, "ch": 8}


class Params(NamedTuple):
    down1: Annotated[jax.Array, "kh", "kw", "c", "ch"]
    norm1: Annotated[jax.Array, "groups", "per_group"]  # a scale and shift per channel, in groups
    shift1: Annotated[jax.Array, "groups", "per_group"]
    down2: Annotated[jax.Array, "kh", "kw", "ch", "ch"]
    norm2: Annotated[jax.Array, "groups", "per_group"]
    shift2: Annotated[jax.Array, "groups", "per_group"]
    middle: Annotated[jax.Array, "kh", "kw", "ch", "ch"]
    up2: Annotated[jax.Array, "kh", "kw", "ch2", "ch"]
    up1: Annotated[jax.Array, "kh", "kw", "ch2", "ch"]
    head: Annotated[jax.Array, "one", "one", "ch", "c"]


def conv(x: jax.Array, k: jax.Array) -> jax.Array:
    return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def max_pool(x: jax.Array) -> jax.Array:
    return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def upsample(x: jax.Array) -> jax.Array:
    return jnp.repeat(jnp.repeat(x, 2, axis=1), 2, axis=2)


def group_norm(x: jax.Array, scale: jax.Array, shift: jax.Array) -> jax.Array:
    b, h, w, c = x.shape
    g: Annotated[jax.Array, "batch", "h", "w", "groups", "per_group"] = x.reshape(b, h, w, GROUPS, c // GROUPS)
    mean = jnp.mean(g, axis=(1, 2, 4), keepdims=True)
    var = jnp.var(g, axis=(1, 2, 4), keepdims=True)
    n: Annotated[jax.Array, "batch", "h", "w", "groups", "per_group"] = (g - mean) * jax.lax.rsqrt(var + 1e-5)
    y: Annotated[jax.Array, "batch", "h", "w", "ch"] = (n * scale + shift).reshape(b, h, w, c)
    return y


def skip_concat(up: jax.Array, skip: jax.Array) -> jax.Array:
    """The upsampled features and the skip connection side by side along channels (local: only
    height and width are split); the reshape names the doubled channel dim."""
    b, h, w, c = up.shape
    both: Annotated[jax.Array, "batch", "h", "w", "ch2"] = jnp.concatenate([up, skip], axis=-1).reshape(b, h, w, 2 * c)
    return both


@mesh(rows=2, cols=4, rules={"h": "rows", "w": "cols"})
def unet(p: Params, x: Annotated[jax.Array, "batch", "h", "w", "c"],
         target: Annotated[jax.Array, "batch", "h", "w", "c"]) -> Annotated[jax.Array, ()]:
    skip1 = jax.nn.relu(group_norm(conv(x, p.down1), p.norm1, p.shift1))                 # 32 x 32
    skip2 = jax.nn.relu(group_norm(conv(max_pool(skip1), p.down2), p.norm2, p.shift2))   # 16 x 16
    middle = jax.nn.relu(conv(max_pool(skip2), p.middle))                                # 8 x 8
    up2: Annotated[jax.Array, "batch", "h", "w", "ch"] = upsample(middle)               # 16 x 16
    u2 = jax.nn.relu(conv(skip_concat(up2, skip2), p.up2))
    up1: Annotated[jax.Array, "batch", "h", "w", "ch"] = upsample(u2)                   # 32 x 32
    u1 = jax.nn.relu(conv(skip_concat(up1, skip1), p.up1))
    out = x + conv(u1, p.head)
    return jnp.mean(jnp.square(out - target))


def init_params(seed: int = 0) -> Params:
    rng = np.random.default_rng(seed)
    s = SIZES

    def kernel(k: int, cin: int, cout: int) -> jax.Array:
        return jnp.asarray(rng.standard_normal((k, k, cin, cout)) / np.sqrt(k * k * cin), jnp.float32)

    def ones(c: int) -> jax.Array:
        return jnp.ones((GROUPS, c // GROUPS), jnp.float32)

    c, ch = s["c"], s["ch"]
    return Params(kernel(3, c, ch), ones(ch), 0 * ones(ch), kernel(3, ch, ch), ones(ch), 0 * ones(ch),
                  kernel(3, ch, ch), kernel(3, 2 * ch, ch), kernel(3, 2 * ch, ch), kernel(1, ch, c) * 0.1)


def batches(steps: int, seed: int = 1):
    """Denoising: smooth random images (a few sinusoids), and the same images with noise added."""
    s = SIZES
    rng = np.random.default_rng(seed)
    yy, xx = np.meshgrid(np.linspace(0, 1, s["h"]), np.linspace(0, 1, s["w"]), indexing="ij")
    for _ in range(steps):
        f = rng.uniform(1, 4, (s["batch"], 1, 1, s["c"], 2))
        clean = np.sin(2 * np.pi * (f[..., 0] * yy[None, :, :, None] + f[..., 1] * xx[None, :, :, None]))
        noisy = clean + 0.3 * rng.standard_normal(clean.shape)
        yield noisy.astype(np.float32), clean.astype(np.float32)


def train(fn, params: Params, steps: int) -> list[float]:
    import optax

    optimizer = optax.adam(1e-2)
    opt_state = optimizer.init(params)

    @jax.jit
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    losses = []
    for x, y in batches(steps):
        params, opt_state, loss = step(params, opt_state, x, y)
        losses.append(float(loss))
    return losses


def main(argv: list[str] | None = None) -> int:
    from _report import print_collectives

    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--reference", action="store_true", help="also train on one device and compare")
    args = parser.parse_args(argv)
    params = init_params()
    x, y = next(batches(1))
    loss, ref_loss = float(unet(params, x, y)), float(unet.reference(params, x, y))
    print(f"mesh: {unet.mesh_spec}; images {x.shape} split over height and width")
    print(f"loss {loss:.6f} vs one device {ref_loss:.6f} (relative difference {abs(loss - ref_loss) / ref_loss:.2e})")
    status = 0 if abs(loss - ref_loss) <= 1e-5 * abs(ref_loss) else 1
    print_collectives("collectives in the compiled forward program", unet.lower(params, x, y).compile().as_text())
    losses = train(unet, params, args.steps)
    for i, value in enumerate(losses):
        print(f"step {i:3d}  loss {value:.5f}")
    if args.reference:
        reference = train(unet.reference, params, args.steps)
        worst = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
        print(f"max relative difference of per-step losses from one-device training: {worst:.2e}")
        if worst > 1e-4:
            print("FAILED: sharded training differs from one-device training by more than 1e-4")
            status = 1
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {args.steps} steps on mesh {unet.mesh_spec}")
    return status


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    sys.exit(main())
