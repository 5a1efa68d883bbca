"""optax's cross-entropy losses inside the loss, as training code calls them, over a vocab split across
'model' and a batch split across 'data': ``optax.softmax_cross_entropy_with_integer_labels(logits,
labels)`` (padding masked out after) and ``optax.softmax_cross_entropy(logits, one_hot)``.  meshify runs
optax's definition (logsumexp minus the label's logit: a masked local lookup and psums), written out.
Before, "optax.softmax_cross_entropy_with_integer_labels has no meshify rule"."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(data=2, model=4, rules={"batch": "data", "vocab": "model"})
def f(h: Tensor["batch", "seq", "d"], emb: Tensor["vocab", "d"], labels: Tensor["batch", "seq"]):
    logits = h @ emb.T
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels)
    mask = (labels != 0).astype(jnp.float32)
    onehot = jax.nn.one_hot(labels, logits.shape[-1])
    dense = optax.losses.softmax_cross_entropy(logits, onehot, axis=-1)
    return jnp.sum(loss * mask) / jnp.maximum(jnp.sum(mask), 1.0) + 0.1 * jnp.mean(dense)


def inputs():
    rng = np.random.default_rng(49)
    return (rng.standard_normal((4, 6, 8)).astype(np.float32), 0.5 * rng.standard_normal((16, 8)).astype(np.float32),
            rng.integers(0, 16, (4, 6)).astype(np.int32))
