"""A dict built in the function and returned without a return hint, as training code returns metrics:
``{"loss": loss, "accuracy": acc}`` where the loss is a partial sum over a split vocabulary (completed on its
way out) and the logits stay split; a dict held in a name, read back by key inside the function; gradients
through the loss.  Before, "Dict over array 'loss' is not supported" (found by the user-style attack)."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"vocab": "model"})
def f(h: Tensor["batch", "d"], w: Tensor["d", "vocab"], labels: Tensor["batch"]):
    logits = h @ w
    logp = jax.nn.log_softmax(logits)
    parts = {"nll": -jnp.take_along_axis(logp, labels[:, None], axis=-1)[:, 0], "logits": logits}
    acc = jnp.mean(jnp.argmax(parts["logits"], -1) == labels)
    return {"loss": jnp.mean(parts["nll"]), "accuracy": acc, "logits": parts["logits"] * 2.0}


def scenario(mod, pick):
    h, w, labels = inputs()
    out = pick(mod.f)(h, w, labels)
    grads = jax.grad(lambda a, b: pick(mod.f)(a, b, labels)["loss"], argnums=(0, 1))(h, w)
    return out, grads


def inputs():
    rng = np.random.default_rng(317)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((8, 16)).astype(np.float32),
            rng.integers(0, 16, 4).astype(np.int32))
