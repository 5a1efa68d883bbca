"""A 2-layer decoder-only Transformer LM, written for one device, trained on a 2x4 mesh.

The model below is plain single-device JAX with dims hints and one ``@mesh``:
the batch is split over ``batch`` (2); attention heads, the FFN hidden dim and the
vocabulary over ``model`` (4) -- Megatron's layout with a vocab-parallel embedding and
loss.  meshify inserts the collectives: two all-reduces per layer forward, a masked
local embedding lookup, and a cross-entropy that never gathers the logits.

    python examples/transformer_lm.py --steps 50             # sharded, on 8 simulated CPU devices
    python examples/transformer_lm.py --steps 50 --reference # and the same model on one device
    meshify launch -n 2 examples/transformer_lm.py --steps 5 # 2 processes x 4 devices, one mesh
    meshify diff examples/transformer_lm.py                  # the generated shard_map program

Run as several processes (``meshify launch``, a TPU pod slice, a GPU cluster), each
process feeds only its own rows of every batch, as a per-host data loader would.

The task is synthetic: each sequence counts up from a random start with a random
stride (mod the vocabulary), and the model learns to predict the next token.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Annotated

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported

import jax
import jax.numpy as jnp
import numpy as np

import meshify.runtime as mr
from meshify import mesh
from meshify.runtime import simulate_cpu_devices

simulate_cpu_devices(8)  # before any JAX operation


@mesh(batch=2, model=4, rules={"heads": "model", "d_ff": "model", "vocab": "model"})
def lm_loss(tokens: Annotated[jax.Array, "batch", "length"],
            targets: Annotated[jax.Array, "batch", "length"],
            embed: Annotated[jax.Array, "vocab", "d_model"],
            norm1: Annotated[jax.Array, "layers", "d_model"],
            wq: Annotated[jax.Array, "layers", "d_model", "heads", "d_head"],
            wk: Annotated[jax.Array, "layers", "d_model", "heads", "d_head"],
            wv: Annotated[jax.Array, "layers", "d_model", "heads", "d_head"],
            wo: Annotated[jax.Array, "layers", "heads", "d_head", "d_model"],
            norm2: Annotated[jax.Array, "layers", "d_model"],
            w1: Annotated[jax.Array, "layers", "d_model", "d_ff"],
            w2: Annotated[jax.Array, "layers", "d_ff", "d_model"],
            norm_f: Annotated[jax.Array, "d_model"]) -> Annotated[jax.Array, ()]:
    """Mean next-token cross-entropy of a pre-norm decoder with a tied embedding."""
    x: Annotated[jax.Array, "batch", "length", "d_model"] = embed[tokens]
    length = tokens.shape[1]
    causal = jnp.tril(jnp.ones((length, length), dtype=bool))
    for i in range(wq.shape[0]):
        # attention block (RMS norm)
        h = x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * norm1[i]
        q = jnp.einsum("bld,dhk->blhk", h, wq[i])
        k = jnp.einsum("bld,dhk->blhk", h, wk[i])
        v = jnp.einsum("bld,dhk->blhk", h, wv[i])
        scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(q.shape[-1])
        probs = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
        x = x + jnp.einsum("bhqs,bshk,hkd->bqd", probs, v, wo[i])
        # feed-forward block (layer norm)
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        h = (x - mu) / jnp.sqrt(var + 1e-5) * norm2[i]
        x = x + jnp.einsum("blf,fd->bld", jax.nn.gelu(jnp.einsum("bld,df->blf", h, w1[i])), w2[i])
    h = x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * norm_f
    logits = jnp.einsum("bld,vd->blv", h, embed)
    picked = jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - picked)


SIZES = {"batch": 8, "length": 16, "d_model": 64, "heads": 8, "d_head": 8, "d_ff": 256, "vocab": 256, "layers": 2}


def init_params(seed: int = 0) -> dict[str, np.ndarray]:
    s = SIZES
    rng = np.random.default_rng(seed)

    def normal(*shape: int, fan_in: int) -> np.ndarray:
        return (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)

    L, D, H, K, F, V = s["layers"], s["d_model"], s["heads"], s["d_head"], s["d_ff"], s["vocab"]
    return {
        "embed": normal(V, D, fan_in=D),
        "norm1": np.ones((L, D), np.float32),
        "wq": normal(L, D, H, K, fan_in=D), "wk": normal(L, D, H, K, fan_in=D),
        "wv": normal(L, D, H, K, fan_in=D), "wo": normal(L, H, K, D, fan_in=H * K),
        "norm2": np.ones((L, D), np.float32),
        "w1": normal(L, D, F, fan_in=D), "w2": normal(L, F, D, fan_in=F),
        "norm_f": np.ones((D,), np.float32),
    }


def batches(steps: int, seed: int = 1):
    """Counting sequences: start + stride * t (mod vocab); targets are the next tokens."""
    s = SIZES
    rng = np.random.default_rng(seed)
    t = np.arange(s["length"] + 1)
    for _ in range(steps):
        start = rng.integers(0, s["vocab"], (s["batch"], 1))
        stride = rng.integers(1, 4, (s["batch"], 1))
        seq = ((start + stride * t) % s["vocab"]).astype(np.int32)
        yield seq[:, :-1], seq[:, 1:]


def feed(tokens, targets):
    """One batch as the training step takes it: numpy on one process; on several, global arrays
    assembled from each process's own rows (the rows its devices hold)."""
    if jax.process_count() == 1:
        return tokens, targets
    shardings = lm_loss.sharded.shardings
    rows = mr.process_slice(tokens.shape, shardings["tokens"])
    return (mr.from_host(mr.process_local(tokens[rows]), shardings["tokens"]),
            mr.from_host(mr.process_local(targets[rows]), shardings["targets"]))


def make_step(loss_fn, optimizer):
    @jax.jit
    def step(params, opt_state, tokens, targets):
        loss, grads = jax.value_and_grad(lambda p: loss_fn(tokens, targets, **p))(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax_apply(params, updates), opt_state, loss

    return step


def optax_apply(params, updates):
    import optax

    return optax.apply_updates(params, updates)


def train(loss_fn, params, steps: int, sharded: bool, label: str) -> list[float]:
    import optax
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    optimizer = optax.adamw(3e-3, weight_decay=0.01)
    if sharded:  # put every parameter on the mesh once; steps keep these shardings
        tokens0, targets0 = next(batches(1))
        placed = lm_loss.place(tokens0, targets0, **params)[2:]
        params = dict(zip(params, placed))
    opt_state = optimizer.init(params)
    step = make_step(loss_fn, optimizer)
    losses = []
    columns = (TextColumn(f"{label:>9}"), BarColumn(), TextColumn("step {task.completed}/{task.total}"),
               TextColumn("loss {task.fields[loss]:.4f}"), TimeElapsedColumn())
    with Progress(*columns, transient=False) as progress:
        task = progress.add_task(label, total=steps, loss=float("nan"))
        for tokens, targets in batches(steps):
            if sharded:
                tokens, targets = feed(tokens, targets)
            params, opt_state, loss = step(params, opt_state, tokens, targets)
            losses.append(float(loss))
            progress.update(task, advance=1, loss=losses[-1])
    if sharded:
        expected = lm_loss.sharded.shardings
        for name, value in params.items():
            assert value.sharding.is_equivalent_to(expected[name], value.ndim), (name, value.sharding)
    return losses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--reference", action="store_true", help="also train on one device and compare")
    parser.add_argument("--losses-out", metavar="PATH", help="write the per-step losses as JSON (process 0)")
    args = parser.parse_args(argv)
    mesh_ = lm_loss.sharded.mesh
    print(f"mesh: {lm_loss.mesh_spec} on {mesh_.devices.size} {mesh_.devices.flat[0].platform} devices; "
          f"sizes: {SIZES}")
    params = init_params()
    losses = train(lm_loss, params, args.steps, sharded=True, label="sharded")
    for i, loss in enumerate(losses):
        print(f"step {i:3d}  loss {loss:.5f}")
    if args.losses_out and jax.process_index() == 0:
        with open(args.losses_out, "w") as f:
            json.dump(losses, f)
    status = 0
    if losses[-1] >= losses[0]:
        print(f"FAILED: the loss did not fall ({losses[0]:.4f} -> {losses[-1]:.4f})")
        status = 1
    if args.reference:
        reference = train(jax.jit(lm_loss.reference), params, args.steps, sharded=False, label="1 device")
        worst = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
        print(f"max relative difference of per-step losses from one-device training: {worst:.2e}")
        if worst > 1e-3:
            print("FAILED: sharded training differs from one-device training by more than 1e-3")
            status = 1
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {args.steps} steps")
    return status


if __name__ == "__main__":
    sys.exit(main())
