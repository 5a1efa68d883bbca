"""Code as people debug and annotate it: ``with jax.named_scope(...)`` in a helper and in the ``@mesh`` function
(and ``jax.profiler.TraceAnnotation``), ``jax.debug.print`` of a partial sum, of a split array and of a whole
scalar, ``jax.named_call(lambda ...)(h)``, a trace-time ``print`` of a shape, and a scan body rebound to its
checkpointed self (``body = jax.checkpoint(body, policy=...)``) or to a partial of itself (``step =
functools.partial(step, scale=...)``).  Before: "'with' statements are not supported", "jax.debug.print has no
meshify rule", "jax.named_call(...) has no meshify rule" and "recursive call of the nested function body()".
``scoped``: helpers under ``@jax.named_scope(...)`` and ``@functools.partial(jax.named_call, name=...)``, a scope
per layer in a kept loop, a one-line ``with``, and returns inside ``with`` blocks (was "does not
end in a return")."""
import contextlib
import functools

import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


def block(x, w1, w2):
    with jax.named_scope("mlp"):
        h = jax.nn.relu(x @ w1)
    return h @ w2


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def f(x: Tensor["batch", "d"], w1s: Tensor["layer", "d", "d_ff"], w2s: Tensor["layer", "d_ff", "d"]):
    print("tracing f with", x.shape)

    def body(h, ws):
        w1, w2 = ws
        return h + block(h, w1, w2), None

    body = jax.checkpoint(body, policy=jax.checkpoint_policies.nothing_saveable, prevent_cse=False)
    with jax.named_scope("layers"), jax.profiler.TraceAnnotation("scan"):
        h, _ = jax.lax.scan(body, x, (w1s, w2s))
    jax.debug.print("mean {m}, first row {r}, partial {p}", m=h.mean(), r=h[0], p=(h @ w1s[0]).sum())

    def step(t, scale):
        return jnp.tanh(t) * scale

    step = functools.partial(step, scale=0.5)
    return jax.named_call(lambda t: t * 2, name="double")(step(h))


@jax.named_scope("norm")
def normed(x):
    return x / jnp.linalg.norm(x, axis=-1, keepdims=True)


@functools.partial(jax.named_call, name="mlp")
def mlp(x, w1, w2):
    return jax.nn.relu(x @ w1) @ w2


@mesh(batch=2, model=4, rules={"d_ff": "model"})
def scoped(x: Tensor["batch", "d"], w1s: Tensor["layer", "d", "d_ff"], w2s: Tensor["layer", "d_ff", "d"]):
    for i in range(w1s.shape[0]):  # (a loop kept as written: its scope named per layer)
        with jax.named_scope(f"layer_{i}"):
            h = jax.nn.relu(x @ w1s[i])
            x = x + h @ w2s[i]
    with contextlib.nullcontext(): y = x * 2  # noqa: E701

    def inner(t):
        with jax.named_scope("inner"):
            return jnp.tanh(t @ w1s[0]) @ w2s[0]

    with jax.named_scope("out"):  # (the function's return inside a with)
        return inner(y) + x.sum() + normed(mlp(x, w1s[1], w2s[1]))


def inputs():
    rng = np.random.default_rng(21)
    args = (rng.standard_normal((4, 8)).astype(np.float32), (rng.standard_normal((3, 8, 16)) * 0.3).astype(np.float32),
            (rng.standard_normal((3, 16, 8)) * 0.3).astype(np.float32))
    return {"f": args, "scoped": args}
