"""A diffusion schedule read per example as DDPM code reads it: ``alphas_cumprod.at[t].get(mode="fill",
fill_value=-1.0)``, run as ``jnp.take(..., mode="fill")`` reads it (negative steps wrap from -size, the rest out
of range give the fill), over a split batch, and with the schedule's steps split too (a masked lookup).  Before,
".get() with arguments" was refused (the UNet attack, session 25)."""
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=8, rules={"batch": "data"})
def batch_split(ac: Tensor["steps"], t: Tensor["batch"], x: Tensor["batch", "d"]):
    a = ac.at[t].get(mode="fill", fill_value=-1.0)
    return x * jnp.sqrt(jnp.abs(a))[:, None]


@mesh(data=2, model=4, rules={"batch": "data", "steps": "model"})
def steps_split(ac: Tensor["steps"], t: Tensor["batch"], x: Tensor["batch", "d"]):
    return x * ac.at[t].get(mode="fill", fill_value=0.5)[:, None]


def inputs():
    rng = np.random.default_rng(70)
    t = np.array([-11, -1, 0, 5, 9, 10, 20, 3], np.int32)
    ac = np.linspace(0.1, 1.0, 8).astype(np.float32)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    return {"batch_split": (ac, t, x), "steps_split": (ac, t, x)}
