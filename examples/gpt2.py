"""A GPT-2-style model in the common functional JAX style, made parallel by hints alone.

Parameters live in NamedTuples, each component is a helper function (layer_norm,
attention, mlp, block), the 4 layers are stacked and run with ``jax.lax.scan``, a
static config and a ``train`` flag pass through, and dropout draws from ``jax.random``.
Compare with ``examples/gpt2_plain.py``, the single-device original: the only changes
are dims hints (``jax.Array`` becomes ``Annotated[jax.Array, "batch", "length"]``) and one
``@mesh`` (``diff examples/gpt2_plain.py examples/gpt2.py``).

    python examples/gpt2.py --steps 20              # train on a 2x4 mesh of simulated CPU devices
    python examples/gpt2.py --steps 20 --reference  # and compare with one-device training
    meshify diff examples/gpt2.py                   # the generated shard_map program
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Annotated, NamedTuple

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported

import jax
import jax.numpy as jnp
import numpy as np

from meshify import mesh
from meshify.runtime import simulate_cpu_devices

simulate_cpu_devices(8)  # before any JAX operation


class Config(NamedTuple):
    heads: int = 8
    dropout: float = 0.1


DEFAULT_CONFIG = Config()


class LayerNorm(NamedTuple):
    scale: Annotated[jax.Array, "layers", "d_model"]
    bias: Annotated[jax.Array, "layers", "d_model"]


class Attention(NamedTuple):
    wqkv: Annotated[jax.Array, "layers", "d_model", "qkv", "heads", "d_head"]
    wo: Annotated[jax.Array, "layers", "heads", "d_head", "d_model"]


class Mlp(NamedTuple):
    w_in: Annotated[jax.Array, "layers", "d_model", "d_ff"]
    b_in: Annotated[jax.Array, "layers", "d_ff"]
    w_out: Annotated[jax.Array, "layers", "d_ff", "d_model"]
    b_out: Annotated[jax.Array, "layers", "d_model"]


class Block(NamedTuple):
    ln1: LayerNorm
    attn: Attention
    ln2: LayerNorm
    mlp: Mlp


class FinalNorm(NamedTuple):
    scale: Annotated[jax.Array, "d_model"]
    bias: Annotated[jax.Array, "d_model"]


class GPT2(NamedTuple):
    wte: Annotated[jax.Array, "vocab", "d_model"]
    wpe: Annotated[jax.Array, "length", "d_model"]
    blocks: Block
    ln_f: FinalNorm


def layer_norm(x, p):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) * jax.lax.rsqrt(var + 1e-5) * p.scale + p.bias


def dropout(x, key, rate, train):
    if not train:
        return x
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return jnp.where(keep, x / (1.0 - rate), 0.0)


def attention(x, p, key, cfg, train):
    k_attn, k_out = jax.random.split(key)
    qkv = jnp.einsum("bld,dthk->tblhk", x, p.wqkv)
    q, k, v = qkv[0], qkv[1], qkv[2]
    length = x.shape[1]
    causal = jnp.tril(jnp.ones((length, length), dtype=bool))
    scores = jnp.einsum("bqhk,bshk->bhqs", q, k) / jnp.sqrt(q.shape[-1])
    probs = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    probs = dropout(probs, k_attn, cfg.dropout, train)
    out = jnp.einsum("bhqs,bshk,hkd->bqd", probs, v, p.wo)
    return dropout(out, k_out, cfg.dropout, train)


def mlp(x, p, key, cfg, train):
    h = jax.nn.gelu(jnp.einsum("bld,df->blf", x, p.w_in) + p.b_in)
    return dropout(jnp.einsum("blf,fd->bld", h, p.w_out) + p.b_out, key, cfg.dropout, train)


def block(x, p, key, cfg, train):
    k1, k2 = jax.random.split(key)
    x = x + attention(layer_norm(x, p.ln1), p.attn, k1, cfg, train)
    return x + mlp(layer_norm(x, p.ln2), p.mlp, k2, cfg, train)


@mesh(batch=2, model=4, rules={"heads": "model", "d_ff": "model", "vocab": "model"})
def gpt2(params: GPT2,
         tokens: Annotated[jax.Array, "batch", "length"],
         targets: Annotated[jax.Array, "batch", "length"],
         key: Annotated[jax.Array, ()],
         cfg: Config = DEFAULT_CONFIG,
         train: bool = False) -> tuple[Annotated[jax.Array, ()], Annotated[jax.Array, "batch", "length", "vocab"]]:
    """Mean next-token cross-entropy and the logits (tied embedding head)."""
    x = params.wte[tokens] + params.wpe
    keys = jax.random.split(key, params.blocks.ln1.scale.shape[0])
    x, _ = jax.lax.scan(lambda h, layer: (block(h, layer[0], layer[1], cfg, train), None), x,
                        (params.blocks, keys))
    h = layer_norm(x, params.ln_f)
    logits = jnp.einsum("bld,vd->blv", h, params.wte)
    picked = jnp.take_along_axis(logits, targets[..., None], axis=-1)[..., 0]
    loss = jnp.mean(jax.nn.logsumexp(logits, axis=-1) - picked)
    return loss, logits


SIZES = {"batch": 8, "length": 16, "d_model": 64, "heads": 8, "d_head": 8, "d_ff": 256, "vocab": 256, "layers": 4}


def init_params(seed: int = 0) -> GPT2:
    s = SIZES
    rng = np.random.default_rng(seed)
    L, D, H, K, F, V, T = s["layers"], s["d_model"], s["heads"], s["d_head"], s["d_ff"], s["vocab"], s["length"]

    def normal(*shape: int, scale: float = 0.02) -> jax.Array:
        return jnp.asarray(rng.standard_normal(shape) * scale, jnp.float32)

    def norm(*shape: int) -> LayerNorm:
        return LayerNorm(jnp.ones(shape, jnp.float32), jnp.zeros(shape, jnp.float32))

    blocks = Block(norm(L, D), Attention(normal(L, D, 3, H, K), normal(L, H, K, D)), norm(L, D),
                   Mlp(normal(L, D, F), jnp.zeros((L, F), jnp.float32), normal(L, F, D),
                       jnp.zeros((L, D), jnp.float32)))
    return GPT2(normal(V, D), normal(T, D, scale=0.01), blocks,
                FinalNorm(jnp.ones(D, jnp.float32), jnp.zeros(D, jnp.float32)))


def batches(steps: int, seed: int = 1):
    """Counting sequences (start + stride * t mod vocab); targets are the next tokens."""
    s = SIZES
    rng = np.random.default_rng(seed)
    t = np.arange(s["length"] + 1)
    for _ in range(steps):
        start = rng.integers(0, s["vocab"], (s["batch"], 1))
        stride = rng.integers(1, 4, (s["batch"], 1))
        seq = ((start + stride * t) % s["vocab"]).astype(np.int32)
        yield seq[:, :-1], seq[:, 1:]


def train(fn, params: GPT2, steps: int, cfg: Config, sharded: bool) -> list[float]:
    import optax

    optimizer = optax.adamw(3e-3, weight_decay=0.01)
    if sharded:  # place the parameters once; steps keep their shardings
        tokens, targets = next(batches(1))
        params = gpt2.place(params, tokens, targets, jax.random.key(0), cfg, True)[0]
    opt_state = optimizer.init(params)

    @jax.jit
    def step(params, opt_state, tokens, targets, key):
        def loss_fn(p):
            return fn(p, tokens, targets, key, cfg, True)[0]

        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    losses = []
    for i, (tokens, targets) in enumerate(batches(steps)):
        params, opt_state, loss = step(params, opt_state, tokens, targets, jax.random.key(100 + i))
        losses.append(float(loss))
    return losses


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--reference", action="store_true", help="also train on one device and compare")
    args = parser.parse_args(argv)
    cfg = Config()
    params = init_params()
    tokens, targets = next(batches(1))
    key = jax.random.key(0)
    status = 0
    for train_flag in (False, True):
        loss, logits = gpt2(params, tokens, targets, key, cfg, train_flag)
        ref_loss, ref_logits = gpt2.reference(params, tokens, targets, key, cfg, train_flag)
        diff = float(np.abs(np.asarray(logits) - np.asarray(ref_logits)).max())
        scale = float(np.abs(np.asarray(ref_logits)).max())
        print(f"dropout {'on ' if train_flag else 'off'}: logits max abs difference from one device {diff:.2e} "
              f"(max |logit| {scale:.2f}), loss {float(loss):.6f} vs {float(ref_loss):.6f}")
        if diff > 1e-5 * max(1.0, scale):
            print("FAILED: logits differ from one device by more than rtol 1e-5")
            status = 1
    losses = train(gpt2, params, args.steps, cfg, sharded=True)
    for i, loss in enumerate(losses):
        print(f"step {i:3d}  loss {loss:.5f}")
    if args.reference:
        reference = train(jax.jit(gpt2.reference, static_argnums=(4, 5)), params, args.steps, cfg, sharded=False)
        worst = max(abs(a - b) / abs(b) for a, b in zip(losses, reference))
        print(f"max relative difference of per-step losses from one-device training: {worst:.2e}")
        if worst > 1e-4:
            print("FAILED: sharded training differs from one-device training by more than 1e-4")
            status = 1
    print(f"loss {losses[0]:.4f} -> {losses[-1]:.4f} in {args.steps} steps on mesh {gpt2.mesh_spec}")
    return status


if __name__ == "__main__":
    sys.exit(main())
