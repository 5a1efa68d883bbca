# Bad input: parameters in a plain dict whose arrays' dims nothing names (params: dict).
# expect: LayoutError at 12:30 naming class Params(TypedDict): w1
import jax.numpy as jnp

from meshify import Tensor, mesh


@mesh(data=2, model=4, rules={"batch": "data", "f": "model"})
def f(params: dict, x: Tensor["batch", "d"]):
    # Its fix names a TypedDict with the keys the function reads (w1 and w2); that runs
    # (tests/test_fixes.py: test_a_plain_dict_of_params_gets_a_typeddict_that_runs).
    return jnp.mean(jnp.tanh(x @ params["w1"]) @ params["w2"])
