"""optax losses whose definition reads an argument twice, given an expression rather than a name: ``optax.smooth_labels(
jax.nn.one_hot(labels, n), 0.1)`` over a vocabulary split on 'model' (the one-hot evaluated once, held by a lambda's
parameter: ``(lambda labels_held: ...)(mr.one_hot(...))``), and the labels still read afterwards.  Before, "bind it
to a name first: labels = jax.nn.one_hot(...)", which shadowed the integer labels (the ResNet attack)."""
import jax
import jax.numpy as jnp
import numpy as np
import optax

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"classes": "model"})
def f(logits: Tensor["batch", "classes"], labels: Tensor["batch"]):
    n = logits.shape[-1]
    soft = optax.smooth_labels(jax.nn.one_hot(labels, n), 0.1)
    loss = optax.softmax_cross_entropy(logits, soft).mean()
    return loss, (labels == jnp.argmax(logits, -1)).mean()


def inputs():
    rng = np.random.default_rng(101)
    return rng.standard_normal((4, 8)).astype(np.float32), np.array([1, 7, 0, 3], np.int32)
