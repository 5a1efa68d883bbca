"""``optax.sigmoid_binary_cross_entropy`` and ``optax.smooth_labels`` inside the function, run as optax
defines them: a multi-label head over a split label dim, labels smoothed over a split vocabulary then fed to
``optax.softmax_cross_entropy``; gradients through the logits.  Before, "optax.smooth_labels has no rule"."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model", "tags": "model"})
def f(logits: Tensor["batch", "vocab"], targets: Tensor["batch"], tag_logits: Tensor["batch", "tags"],
      tags: Tensor["batch", "tags"]) -> tuple[Tensor[()], Tensor[()]]:
    onehot = jax.nn.one_hot(targets, logits.shape[-1])
    smoothed = optax.smooth_labels(onehot, 0.1)
    ce = optax.softmax_cross_entropy(logits, smoothed).mean()
    bce = optax.sigmoid_binary_cross_entropy(tag_logits, tags).sum(axis=-1).mean()
    return ce, bce


def inputs():
    rng = np.random.default_rng(21)
    return (rng.standard_normal((4, 16)).astype(np.float32), np.array([0, 5, 15, 9], np.int32),
            rng.standard_normal((4, 8)).astype(np.float32), (rng.random((4, 8)) > 0.5).astype(np.float32))
