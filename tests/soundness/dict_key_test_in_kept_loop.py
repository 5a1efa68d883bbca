"""``if "prev" in outs:`` in a kept Python loop whose body stores ``outs["prev"]``: the body is rewritten once,
walked with the keys of its first iteration, where the test is False, so the branch the later iterations take
would be kept as written (a contraction over a split ``d_ff`` left without its psum: a raw JAX error from the
generated code, or a wrong number).  Refused instead, with a fix (a flag of the user's, or keys of the loop's
counter)."""
import jax
import numpy as np

from meshify import Tensor, mesh

EXPECT = "error"


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], ws: Tensor["layer", "d", "d_ff"], wo: Tensor["layer", "d_ff", "d"]):
    outs = {}
    for i in range(ws.shape[0]):
        h = jax.nn.relu(x @ ws[i])
        if "prev" in outs:
            x = x + outs["prev"] @ wo[i]
        outs["prev"] = h
    return x


def inputs():
    rng = np.random.default_rng(4205)
    return (rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal((3, 8, 16)).astype(np.float32),
            rng.standard_normal((3, 16, 8)).astype(np.float32))
