# Bad input: a reshape to a shape held in a name (sizes meshify cannot read one by one); the fix says to write it in the call.
# expect: UnsupportedError at 13:9 naming write it in the call
import jax.numpy as jnp
from meshify import Tensor, mesh

H = 4


@mesh(batch=2, model=4, rules={"q_features": "model"})
def f(x: Tensor["batch", "length", "d_model"], wq: Tensor["d_model", "q_features"]
      ) -> Tensor["batch", "length", "q_features"]:
    shape = x.shape[:-1] + (H, 2)
    q = (x @ wq).reshape(shape)
    return jnp.tanh(q).reshape(x.shape[:-1] + (8,))
