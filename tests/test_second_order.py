"""Second derivatives through meshify's collectives with derivatives of their own (``mr.max``/``mr.min`` over
split dims, ``pmax`` choosers, ``mr.segment_max`` over split edges): each rule's primal result is the rule's own
function, so the rule can be differentiated again, as ``jax.grad`` of ``jax.grad`` of the reference is.  (The GNN
attack: a GAT's segment softmax differentiated twice raised "Differentiation rule for 'pmax' not implemented".)"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from meshify import Tensor, mesh


@mesh(edges=8)
def _segments(m: Tensor["edges", "hidden"], ids: Tensor["edges"]):
    return jax.ops.segment_max(m, ids, num_segments=6) - jax.ops.segment_min(m, ids, num_segments=6) * 0.5


@mesh(batch=2, model=4, rules={"d": "model"})
def _reductions(x: Tensor["batch", "d"]):
    return jnp.max(x, axis=1) ** 2 + jnp.min(x * 3, axis=-1) + jax.nn.logsumexp(x, axis=-1)


def _second(fn, x, *rest):
    def inner(v):
        out = fn(v, *rest)
        return jnp.sum(jnp.where(jnp.isfinite(out), out, 0.0) ** 3)

    return jax.grad(lambda v: jnp.sum(jax.grad(inner)(v) ** 2))(x)


@pytest.mark.parametrize("case", ["segments", "reductions"])
def test_second_derivative_matches_reference(case: str) -> None:
    rng = np.random.default_rng(3)
    if case == "segments":
        fn, x = _segments, jnp.asarray(rng.normal(size=(16, 4)).astype(np.float32))
        rest: tuple = (jnp.asarray(rng.integers(-1, 7, 16).astype(np.int32)),)
    else:
        fn, x, rest = _reductions, jnp.asarray(rng.normal(size=(4, 8)).astype(np.float32)), ()
    got, want = _second(fn, x, *rest), _second(fn.reference, x, *rest)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-4, atol=2e-4)
