"""``optax.cosine_similarity`` / ``optax.cosine_distance`` over a split embedding dim (a contrastive loss, a
similarity head), along the last axis and another one, with and without ``epsilon``, a zero row (0/0: NaN in
both), run as optax defines them (each norm's psum); contractions over the split dim written inline as the
arguments (completed before optax's definition holds them: a KeyError crash before, found by the attack on today's
features).  Before: no rule, refused (attack on CLIP)."""
import jax.numpy as jnp
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "embed": "model"})
def f(img: Tensor["batch", "embed"], txt: Tensor["batch", "embed"], w: Tensor["embed", "embed"]):
    proj = img @ w
    sim = optax.cosine_similarity(proj, txt, epsilon=1e-6)
    dist = optax.losses.cosine_distance(img, txt)
    cols = optax.cosine_similarity(proj, txt, axis=0, epsilon=0.01)
    inline = optax.cosine_similarity(img @ w, txt @ w) + optax.cosine_distance(txt @ w, txt @ w * 2.0)
    return jnp.mean(sim) + jnp.nanmean(dist) + jnp.sum(cols) + jnp.sum(inline)


def inputs():
    rng = np.random.default_rng(72)
    img = rng.standard_normal((4, 8)).astype(np.float32)
    img[2] = 0.0
    return (img, rng.standard_normal((4, 8)).astype(np.float32), 0.3 * rng.standard_normal((8, 8)).astype(np.float32))
