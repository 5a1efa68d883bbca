"""Per-device memory of attention-probability dropout: meshify vs XLA's partitioner vs a global draw.

Dropout on attention probabilities ``probs[batch, heads, q, k]``, batch split over mesh axis
``data`` and heads over ``model`` (2x4 mesh, 8 simulated CPU devices), compiled three ways:

- ``meshify``: the ``@mesh`` function; its draw is ``mr.local_draw``: each device hashes only
  its block of the mask (issue #15);
- ``xla``: the plain function under ``jax.jit`` with ``NamedSharding`` in/out shardings on an
  ``AxisType.Auto`` mesh (XLA's partitioner, which partitions threefry's iota itself);
- ``global_draw``: what meshify generated before: a ``shard_map`` whose every device draws the
  whole mask, then slices its block.

For the forward pass and forward+backward (gradient of ``sum(dropout(probs) * w)``) it prints
and saves (``benchmarks/results/dropout_memory.json``) each program's per-device temporary and
argument bytes from ``compiled.memory_analysis()`` and meshify's ratio to XLA's temp bytes (the
goal: at most 1.15), after checking that every variant's mask is bit-identical to one device's.

    python benchmarks/dropout_memory.py           # batch=8, heads=16, q=k=256 (33.5 MB of probs)
    python benchmarks/dropout_memory.py --quick   # batch=4, heads=8, q=k=64
"""

from __future__ import annotations

import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import meshify.runtime as mr  # noqa: E402
from meshify import Tensor, mesh  # noqa: E402

RATE = 0.1
SIZES = {"full": dict(batch=8, heads=16, q=256, k=256), "quick": dict(batch=4, heads=8, q=64, k=64)}
SPEC = P("data", "model", None, None)
GOAL = 1.15


def dropout(probs, key):
    keep = jax.random.bernoulli(key, 1.0 - RATE, probs.shape)
    return jnp.where(keep, probs / (1.0 - RATE), 0.0)


@mesh(data=2, model=4, rules={"batch": "data", "heads": "model"})
def meshified(probs: Tensor["batch", "heads", "q", "k"], key: Tensor[()]) -> Tensor["batch", "heads", "q", "k"]:
    keep = jax.random.bernoulli(key, 1.0 - RATE, probs.shape)
    return jnp.where(keep, probs / (1.0 - RATE), 0.0)


def global_draw(device_mesh):
    """The code meshify generated before issue #15: the whole mask on every device, then its block."""
    def local(probs, key):
        shape = mr.global_shape(probs, (2, 4, 1, 1))
        keep = jax.random.bernoulli(key, 1.0 - RATE, shape)
        keep = mr.local_block(mr.local_block(keep, axis=0, axis_name="data"), axis=1, axis_name="model")
        return jnp.where(keep, probs / (1.0 - RATE), 0.0)
    return jax.shard_map(local, mesh=device_mesh, in_specs=(SPEC, P()), out_specs=SPEC)


def variants(device_mesh) -> dict:
    sharded, whole = NamedSharding(device_mesh, SPEC), NamedSharding(device_mesh, P())
    return {"meshify": meshified,
            "xla": jax.jit(dropout, in_shardings=(sharded, whole), out_shardings=sharded),
            "global_draw": global_draw(device_mesh)}


def forward_backward(f):
    """``(dropout(probs), d/dprobs sum(dropout(probs) * weights))`` in one program."""
    def program(probs, key, weights):
        out, pullback = jax.vjp(lambda p: f(p, key), probs)
        return out, pullback(weights)[0]
    return program


def measure(sizes: dict) -> dict:
    device_mesh = jax.make_mesh((2, 4), ("data", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    shape = tuple(sizes.values())
    rng = np.random.default_rng(0)
    probs = jax.device_put(rng.random(shape, dtype=np.float32) + 0.5, NamedSharding(device_mesh, SPEC))
    weights = jax.device_put(rng.standard_normal(shape, dtype=np.float32), NamedSharding(device_mesh, SPEC))
    key = jax.random.key(0)
    mask = np.asarray(jax.random.bernoulli(key, 1.0 - RATE, shape))
    rows = []
    for mode in ("fwd", "fwd_bwd"):
        for variant, f in variants(device_mesh).items():
            program, args = (f, (probs, key)) if mode == "fwd" else (forward_backward(f), (probs, key, weights))
            compiled = jax.jit(program).lower(*args).compile()
            out = compiled(*args)
            kept = np.asarray(out if mode == "fwd" else out[0]) != 0  # probs >= 0.5: 0 only where dropped
            assert np.array_equal(kept, mask), f"{variant} {mode}: the mask differs from one device's draw"
            memory = compiled.memory_analysis()
            rows.append({"mode": mode, "variant": variant, "temp_bytes": int(memory.temp_size_in_bytes),
                         "arg_bytes": int(memory.argument_size_in_bytes),
                         "output_bytes": int(memory.output_size_in_bytes)})
    temp = {(r["mode"], r["variant"]): r["temp_bytes"] for r in rows}
    ratios = {mode: {v: round(temp[mode, v] / temp[mode, "xla"], 3) for v in ("meshify", "global_draw")}
              for mode in ("fwd", "fwd_bwd")}
    return {"mesh": "2x4 (data=2, model=4), 8 simulated CPU devices", "jax": jax.__version__,
            "threefry_partitionable": bool(jax.config.jax_threefry_partitionable),
            "probs": {"dims": ["batch", "heads", "q", "k"], "shape": list(shape), "spec": str(SPEC),
                      "global_bytes": int(np.prod(shape)) * 4},
            "rate": RATE, "rows": rows, "temp_ratio_to_xla": ratios, "goal": GOAL}


def report(results: dict) -> str:
    lines = [f"dropout on probs{results['probs']['shape']} {results['probs']['spec']}, {results['mesh']}, "
             f"jax {results['jax']} (threefry_partitionable={results['threefry_partitionable']})",
             f"{'mode':8} {'variant':12} {'temp bytes':>12} {'arg bytes':>12} {'temp / xla':>11}"]
    for row in results["rows"]:
        ratio = results["temp_ratio_to_xla"][row["mode"]].get(row["variant"], 1.0)
        lines.append(f"{row['mode']:8} {row['variant']:12} {row['temp_bytes']:12,} {row['arg_bytes']:12,} "
                     f"{ratio:10.2f}x")
    worst = max(r["meshify"] for r in results["temp_ratio_to_xla"].values())
    lines.append(f"meshify / xla temp bytes: at most {worst:.2f}x (goal <= {GOAL}x): "
                 f"{'met' if worst <= GOAL else 'NOT met'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "dropout_memory.json")
    args = parser.parse_args(argv)
    results = measure(SIZES["quick" if args.quick else "full"])
    print(report(results))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"saved {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
