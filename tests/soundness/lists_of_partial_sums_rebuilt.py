"""Lists and tuples holding partial sums, built the ways real code builds them (session 28's attack listed each as
a refusal): a list nested in a returned list; a helper (or a scan body) returning ``y, [jnp.sum(y), ...]``;
``tuple(sq)``; ``a[:1] + a[2:]``; ``[*a, *b]``; ``acc = acc + (s,)`` in a loop; ``hs = [None] * n`` filled by
``hs[i] = ...`` at literal and loop indices.  Each partial sum is completed where it leaves, in float16 too
(accumulated in float32 and cast back), and lists stay lists."""
import jax
import jax.numpy as jnp
import numpy as np

from meshify import Tensor, mesh

EXPECT = "match"


@mesh(batch=2, model=4, rules={"d": "model"})
def nested(x: Tensor["batch", "d"]):
    return [x, [jnp.sum(x), jnp.sum(x * x)], (jnp.mean(x),)]


def stats(y):
    return y, [jnp.sum(y), jnp.sum(y * y)]


@mesh(batch=2, model=4, rules={"d": "model"})
def helper_list(x: Tensor["batch", "d"]):
    y, s = stats(jnp.tanh(x))
    return y * s[1], s


@mesh(batch=2, model=4, rules={"d": "model"})
def scan_list(x: Tensor["batch", "d"]):
    def body(c, _):
        return c * 0.5, [jnp.sum(c), jnp.sum(c * c)]

    c, ys = jax.lax.scan(body, x, None, length=3)
    return c, ys


@mesh(batch=2, model=4, rules={"d": "model"})
def rebuilt(x: Tensor["batch", "d"]):
    a = [jnp.sum(x), jnp.sum(x * x), jnp.sum(x ** 3)]
    b = [jnp.max(x), x]
    return tuple(a), a[:1] + a[2:], [*a, *b], (*b, a[1])


@mesh(batch=2, model=4, rules={"d": "model"})
def accumulated(x: Tensor["batch", "d"]):
    acc = ()
    for i in range(3):
        acc = acc + (jnp.sum(x * i),)
    hs = [None] * 3
    for i in range(3):
        hs[i] = jnp.sum(jnp.sin(x) * i)
    first = [None] * 2
    first[0] = jnp.sum(x)
    first[1] = x
    return acc, hs, first


@mesh(batch=2, model=4, rules={"d": "model"})
def half(x: Tensor["batch", "d"]):
    y, s = stats(x * 0.5)
    a = [jnp.sum(y), jnp.sum(y * y), s[0]]
    return [y, [a[0], s[1]]], a[:1] + a[2:], [*a, *s]


def inputs():
    x = np.random.default_rng(95).standard_normal((4, 16)).astype(np.float32)
    return {"nested": (x,), "helper_list": (x,), "scan_list": (x,), "rebuilt": (x,), "accumulated": (x,),
            "half": (x.astype(np.float16),)}
