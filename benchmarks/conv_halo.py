"""The ``conv`` case: a 3x3 SAME convolution on images split over height and width (2x4 mesh).

Three programs on the same data and mesh, forward and forward+backward:

- ``meshify``: the ``@mesh`` function below, rewritten (``mr.halo_conv``: one ppermute per side and corner);
- ``gspmd``: its ``.reference`` under ``jax.jit`` with ``NamedSharding`` inputs (XLA's partitioner);
- ``manual``: a hand-written ``shard_map`` halo exchange (rows, then columns of the row-extended block,
  which carries the corners) and a VALID convolution.

For each it prints and saves the collectives of the compiled program (count and bytes per device), the
max abs error against one device and the median step time, and compares the forward halo bytes with the
analytic minimum: per neighbour, halo width x the other local dims x dtype bytes (4 sides + 4 corners).

    python benchmarks/conv_halo.py            # batch 8, 64 x 64 images, 32 channels
    python benchmarks/conv_halo.py --quick    # batch 4, 32 x 32, 8 channels
Results: benchmarks/results/conv_halo.json (conv_halo_quick.json with --quick).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from meshify import mesh
from meshify.runtime import simulate_cpu_devices
from meshify.runtime.hlo import collectives, summarize

simulate_cpu_devices(8)

ROWS, COLS = 2, 4
SIZES = {"full": {"batch": 8, "h": 64, "w": 64, "c": 32}, "quick": {"batch": 4, "h": 32, "w": 32, "c": 8}}
RESULTS = Path(__file__).resolve().parent / "results"


@mesh(rows=ROWS, cols=COLS, rules={"h": "rows", "w": "cols"})
def conv(x: Annotated[jax.Array, "batch", "h", "w", "c"],
         k: Annotated[jax.Array, "kh", "kw", "c", "d"]) -> Annotated[jax.Array, "batch", "h", "w", "d"]:
    return jax.lax.conv_general_dilated(x, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


def _shift(x: jax.Array, axis: str, dim: int, width: int, size: int, forward: bool) -> jax.Array:
    """``width`` rows of the neighbour before (``forward``) or after along ``dim``; zeros at the border."""
    n = x.shape[dim]
    if forward:  # device i receives the last rows of device i - 1
        piece, pairs = jax.lax.slice_in_dim(x, n - width, n, axis=dim), [(i, i + 1) for i in range(size - 1)]
    else:
        piece, pairs = jax.lax.slice_in_dim(x, 0, width, axis=dim), [(i + 1, i) for i in range(size - 1)]
    return jax.lax.ppermute(piece, axis, pairs)


def manual_conv(mesh_: jax.sharding.Mesh):
    """The hand-written program: 1-row halos over 'rows', then 1-column halos (of the extended block) over
    'cols', then a VALID 3x3 convolution of the extended block."""
    spec = P(None, "rows", "cols", None)

    def local(x, k):
        x = jnp.concatenate([_shift(x, "rows", 1, 1, ROWS, True), x, _shift(x, "rows", 1, 1, ROWS, False)], axis=1)
        x = jnp.concatenate([_shift(x, "cols", 2, 1, COLS, True), x, _shift(x, "cols", 2, 1, COLS, False)], axis=2)
        return jax.lax.conv_general_dilated(x, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))

    return jax.jit(jax.shard_map(local, mesh=mesh_, in_specs=(spec, P()), out_specs=spec))


def analytic_halo_bytes(s: dict, itemsize: int = 4) -> dict[str, int]:
    """The least a device must receive for a 3x3 SAME convolution (halo width 1 on each side): per
    neighbour, the width x the other local dims x the dtype's bytes."""
    h, w = s["h"] // ROWS, s["w"] // COLS
    row = 1 * w * s["batch"] * s["c"] * itemsize
    column = 1 * h * s["batch"] * s["c"] * itemsize
    corner = 1 * 1 * s["batch"] * s["c"] * itemsize
    return {"row_neighbour": row, "column_neighbour": column, "corner_neighbour": corner,
            "total": 2 * row + 2 * column + 4 * corner}


def _loss(fn):
    return jax.jit(jax.value_and_grad(lambda x, k: jnp.sum(jnp.sin(fn(x, k))), argnums=(0, 1)))


def _time(fn, args, repeats: int) -> float:
    jax.block_until_ready(fn(*args))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _error(got, want) -> float:
    """The max abs difference from one device, relative to the largest |value| of each output."""
    flat = jax.tree.leaves(got), jax.tree.leaves(want)
    return max(float(np.abs(np.asarray(g) - np.asarray(w)).max() / max(1.0, np.abs(np.asarray(w)).max()))
               for g, w in zip(*flat))


def run(quick: bool, repeats: int) -> dict:
    s = SIZES["quick" if quick else "full"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((s["batch"], s["h"], s["w"], s["c"])).astype(np.float32)
    k = (rng.standard_normal((3, 3, s["c"], s["c"])) / (3 * np.sqrt(s["c"]))).astype(np.float32)
    mesh_ = jax.make_mesh((ROWS, COLS), ("rows", "cols"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    image = NamedSharding(mesh_, P(None, "rows", "cols", None))
    xs, ks = jax.device_put(x, image), jax.device_put(k, NamedSharding(mesh_, P()))
    forward = {"meshify": jax.jit(conv), "gspmd": jax.jit(conv.reference, out_shardings=image),
               "manual": manual_conv(mesh_)}
    want = {"fwd": conv.reference(x, k), "fwd_bwd": _loss(conv.reference)(x, k)}
    rows = []
    for variant, fn in forward.items():
        for mode, program in (("fwd", fn), ("fwd_bwd", _loss(fn))):
            compiled = program.lower(xs, ks).compile()
            found = summarize(collectives(compiled.as_text()))
            rows.append({"variant": variant, "mode": mode, "collectives": {kind: {"count": c, "bytes": b}
                                                                           for kind, (c, b) in found.items()},
                         "bytes_per_device": sum(b for _, b in found.values()),
                         "max_rel_err": _error(program(xs, ks), want[mode]),
                         "median_s": _time(program, (xs, ks), repeats)})
    return {"sizes": s, "mesh": f"{ROWS}x{COLS} (rows, cols)", "kernel": "3x3 SAME, stride 1",
            "analytic_halo_bytes_per_device": analytic_halo_bytes(s), "rows": rows,
            "command": "python benchmarks/conv_halo.py" + (" --quick" if quick else "")}


def _print(result: dict) -> None:
    minimum = result["analytic_halo_bytes_per_device"]
    print(f"conv: {result['kernel']} on {result['sizes']}, mesh {result['mesh']}")
    print(f"analytic minimum halo bytes per device: {minimum['total']} (rows {minimum['row_neighbour']} x 2, "
          f"columns {minimum['column_neighbour']} x 2, corners {minimum['corner_neighbour']} x 4)")
    print(f"{'variant':8} {'mode':8} {'bytes/device':>12} {'vs minimum':>10} {'time (ms)':>10} {'rel err':>9}  collectives")
    for r in result["rows"]:
        kinds = ", ".join(f"{k} x{v['count']} ({v['bytes']} B)" for k, v in r["collectives"].items()) or "none"
        ratio = f"{r['bytes_per_device'] / minimum['total']:.2f}x" if r["mode"] == "fwd" else ""
        print(f"{r['variant']:8} {r['mode']:8} {r['bytes_per_device']:12d} {ratio:>10} {r['median_s'] * 1e3:10.2f} "
              f"{r['max_rel_err']:9.1e}  {kinds}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").partition("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    result = run(args.quick, args.repeats)
    _print(result)
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"conv_halo{'_quick' if args.quick else ''}.json"
    out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"saved {out.relative_to(RESULTS.parent.parent)}")
    fwd = {r["variant"]: r for r in result["rows"] if r["mode"] == "fwd"}
    ok = fwd["meshify"]["bytes_per_device"] == result["analytic_halo_bytes_per_device"]["total"] \
        == fwd["manual"]["bytes_per_device"] and all(r["max_rel_err"] < 1e-5 for r in result["rows"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
