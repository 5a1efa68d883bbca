"""Real step times on one accelerator: each benchmarked case, meshify's program on a one-device
mesh against the plain function under ``jax.jit``, on whatever device JAX starts on.

``benchmarks/run.py`` measures communication on 8 simulated CPU devices, where wall times share
two cores.  This script is its companion for a machine with one real accelerator (one GPU):

- ``meshify``: the case's ``@mesh`` function rebound to a mesh of the same axes, each of size 1,
  and the same rules (``mesh(batch=1, model=1, rules=case.rules)``), so the same rewrite runs,
  but every split is whole and no collective is left in the compiled program;
- ``plain``: the untouched function (``.reference``) under ``jax.jit``, the program a user's
  single-device code is today.

Each row records the step time (median of interleaved runs), the collectives in the compiled
program (none expected) and the largest difference between the two variants' outputs.  (XLA's
``cost_analysis()`` flop count is kept in the JSON but not reported: on GPU it leaves out the
matrix products XLA hands to cuBLAS, so the rate it implies is meaningless there.)
Both run in float32 and in bfloat16 (the float inputs and weights cast; tokens stay int32).
``lm_step`` is one full optax adamw step of ``examples/transformer_lm.py``.

    python benchmarks/one_device.py            # accelerator sizes (the H200 run), a few minutes
    python benchmarks/one_device.py --quick    # small sizes, to check the script on a CPU
    python benchmarks/one_device.py --report benchmarks/results/h200/one_device_h200.json   # its .md again
"""

from __future__ import annotations

import os
import sys

if "--quick" in sys.argv:
    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported

import argparse
import json
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks import cases, run
from meshify import mesh
from meshify.runtime.hlo import collectives, summarize

CASES = ("ffn", "block", "fsdp_tp", "vocab_ce", "dp_mlp", "lm_step")
DTYPES = ("float32", "bfloat16")

SIZES = {
    "accelerator": {
        "ffn": {"B": 32, "L": 1024, "D": 2048, "F": 8192},
        "block": {"B": 16, "L": 1024, "D": 2048, "H": 16, "K": 128, "F": 8192},
        "fsdp_tp": {"B": 16, "L": 1024, "D": 2048, "H": 16, "K": 128, "F": 8192, "layers": 4},
        "vocab_ce": {"B": 16, "L": 1024, "D": 1024, "V": 50304},
        "dp_mlp": {"B": 16384, "I": 2048, "F": 8192, "O": 2048},
        "lm_step": {"B": 16, "L": 1024, "D": 1024, "H": 16, "K": 64, "F": 4096, "V": 32768, "layers": 8},
    },
    "quick": run.SIZES["quick"],
}


def one_device(fn) -> Callable:
    """``fn``'s plain function under ``@mesh`` with the same axes and rules, every axis of size 1."""
    spec = fn.mesh_spec
    return mesh(rules=fn.rules.as_dict(), **{name: 1 for name in spec.names})(fn.reference)


def _cast(tree, dtype):
    return jax.tree.map(lambda a: a.astype(dtype) if jnp.issubdtype(np.asarray(a).dtype, jnp.floating) else a, tree)


def programs(name: str, mode: str, size: dict, dtype) -> tuple[dict[str, Callable], tuple]:
    """The two variants of one (case, mode) and their arguments, on the default device."""
    rng = np.random.default_rng(0)
    if name == "lm_step":
        import optax
        import transformer_lm as lm

        params = run._lm_params(size, rng)
        tokens, targets = run._tokens(size, rng)
        losses = {"meshify": one_device(lm.lm_loss), "plain": lm.lm_loss.reference}
        params = {k: _cast(v, dtype) for k, v in params.items()}  # in lm_loss's order (tree.map sorts keys)
        if mode == "fwd":
            return {v: jax.jit(f) for v, f in losses.items()}, (tokens, targets, *params.values())
        optimizer = optax.adamw(3e-3, weight_decay=0.01)
        steps = {v: lm.make_step(loss, optimizer) for v, loss in losses.items()}
        return steps, (params, optimizer.init(params), tokens, targets)
    fn = getattr(cases, name)
    host = run.HOST_ARGS[name](size, rng)
    host = _cast(host, dtype)
    variants = {"meshify": one_device(fn), "plain": fn.reference}
    if mode == "fwd_bwd":
        argnums = tuple(i for i, a in enumerate(host) if jnp.issubdtype(a.dtype, jnp.floating))
        variants = {v: run._loss_and_grads(p, argnums, name == "vocab_ce") for v, p in variants.items()}
    return {v: jax.jit(p) for v, p in variants.items()}, tuple(host)


def _flops(compiled) -> float:
    analysis = compiled.cost_analysis()
    analysis = analysis[0] if isinstance(analysis, list | tuple) else analysis
    return float((analysis or {}).get("flops", float("nan")))


def _max_diff(a, b) -> float:
    pairs = zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True)
    return max((float(np.max(np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64)), initial=0.0))
                for x, y in pairs), default=0.0)


def measure(name: str, mode: str, size: dict, dtype: str, repeats: int) -> list[dict]:
    variants, args = programs(name, mode, size, jnp.dtype(dtype))
    args = jax.device_put(args)
    compiled, rows, outputs = {}, {}, {}
    for variant, program in variants.items():
        start = time.perf_counter()
        compiled[variant] = program.lower(*args).compile()
        compile_s = time.perf_counter() - start
        outputs[variant] = jax.block_until_ready(compiled[variant](*args))  # the warm-up run
        summary = summarize(collectives(compiled[variant].as_text()))
        rows[variant] = {"case": name, "mode": mode, "dtype": dtype, "variant": variant,
                         "flops": _flops(compiled[variant]), "compile_s": round(compile_s, 3),
                         "collectives": {k: [int(c), int(s)] for k, (c, s) in summary.items()}}
    times: dict[str, list[float]] = {v: [] for v in compiled}
    for _ in range(repeats):
        for variant, program in compiled.items():
            start = time.perf_counter()
            jax.block_until_ready(program(*args))
            times[variant].append(time.perf_counter() - start)
    diff = _max_diff(outputs["meshify"], outputs["plain"])
    same = run.program_text(compiled["meshify"]) == run.program_text(compiled["plain"])
    for variant, row in rows.items():
        row["step_s"] = statistics.median(times[variant])
        row["min_step_s"] = min(times[variant])
        row["tflops_per_s"] = row["flops"] / row["step_s"] / 1e12
        row["max_diff_from_plain"] = diff
        row["same_program"] = same  # the two compiled programs are equal up to names
    return [rows[v] for v in variants]


def device_text() -> str:
    device = jax.devices()[0]
    kind = getattr(device, "device_kind", device.platform)
    return (f"{len(jax.devices())} x {kind} ({device.platform}); jax {jax.__version__}; host {platform.machine()}, "
            f"{os.cpu_count()} CPUs, Python {platform.python_version()}")


def markdown(rows: list[dict], sizes: dict, command: str, seconds: float, device: str) -> str:
    lines = ["# One device: meshify on a one-device mesh vs the plain function under jax.jit",
             "", f"`{command}`: {seconds:.0f} s in all. Device: {device}.", "",
             ("meshify = the case's `@mesh` function with every mesh axis of size 1 and the same rules "
             "(the same rewrite, no collective left); plain = `.reference` under `jax.jit`. "
             "Step time: median of interleaved runs. "
             "Same program: the two compiled programs are equal up to names (no: they differ, perhaps only "
             "in the order of their instructions)."),
             "", "| case | sizes |", "|---|---|"]
    lines += [f"| {n} | {', '.join(f'{k}={v}' for k, v in s.items())} |" for n, s in sizes.items()]
    lines += ["", ("| case | mode | dtype | meshify ms | plain ms | meshify/plain "
              "| collectives | same program | max diff |"), "|---|---|---|---|---|---|---|---|---|"]
    grouped: dict[tuple, dict] = {}
    for row in rows:
        grouped.setdefault((row["case"], row["mode"], row["dtype"]), {})[row["variant"]] = row
    for (case, mode, dtype), pair in grouped.items():
        mine, plain = pair["meshify"], pair["plain"]
        found = ", ".join(f"{k} x{c}" for k, (c, _) in mine["collectives"].items()) or "none"
        lines.append(f"| {case} | {mode} | {dtype} | {mine['step_s'] * 1e3:.3f} | {plain['step_s'] * 1e3:.3f} "
                     f"| {mine['step_s'] / plain['step_s']:.3f}x | {found} "
                     f"| {'yes' if mine['same_program'] else 'no'} | {mine['max_diff_from_plain']:.1e} |")
    ratios = [p["meshify"]["step_s"] / p["plain"]["step_s"] for p in grouped.values()]
    if ratios:
        lines += ["", (f"Median meshify/plain step-time ratio over {len(ratios)} rows: "
                      f"{statistics.median(ratios):.3f}x (range {min(ratios):.3f}x to {max(ratios):.3f}x).")]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, on the CPU")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results", help="results folder")
    parser.add_argument("--name", default="", help="result file stem (default: one_device_<platform>)")
    parser.add_argument("--repeats", type=int, default=20, help="timed runs per variant, interleaved")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of " + ",".join(CASES))
    parser.add_argument("--dtypes", default=",".join(DTYPES), help="comma-separated subset of " + ",".join(DTYPES))
    parser.add_argument("--report", type=Path, help="write the .md beside this results JSON again, and stop")
    args = parser.parse_args(argv)
    if args.report:
        saved = json.loads(args.report.read_text())
        text = markdown(saved["rows"], saved["sizes"], saved.get("command", "python benchmarks/one_device.py"),
                        saved.get("seconds", float("nan")), saved["device"])
        text += "".join(f"\n{note}\n" for note in saved.get("notes", ()))  # what the run's log adds
        args.report.with_suffix(".md").write_text(text)
        return 0
    names = [c for c in args.cases.split(",") if c]
    if unknown := sorted(set(names) - set(CASES)):
        parser.error(f"unknown cases {unknown}; choose from {list(CASES)}")
    dtypes = [d for d in args.dtypes.split(",") if d]
    if unknown := sorted(set(dtypes) - set(DTYPES)):
        parser.error(f"unknown dtypes {unknown}; choose from {list(DTYPES)}")
    sizes = {n: SIZES["quick" if args.quick else "accelerator"][n] for n in names}
    started, rows = time.perf_counter(), []
    stem = args.name or f"one_device_{jax.devices()[0].platform}"
    command = "python benchmarks/one_device.py" + (" --quick" if args.quick else "")
    args.out.mkdir(parents=True, exist_ok=True)
    print(device_text(), file=sys.stderr, flush=True)
    for name in names:
        for mode in run.MODES:
            for dtype in dtypes:
                found = measure(name, mode, sizes[name], dtype, args.repeats)
                rows.extend(found)
                mine, plain = found
                print(f"{name:>8} {mode:<7} {dtype:<8} meshify {mine['step_s'] * 1e3:8.3f} ms "
                      f"plain {plain['step_s'] * 1e3:8.3f} ms ({mine['step_s'] / plain['step_s']:.3f}x) "
                      f"collectives {mine['collectives'] or 'none'} "
                      f"diff {mine['max_diff_from_plain']:.1e} same program {mine['same_program']}",
                      file=sys.stderr, flush=True)
        # written after every case, so that a run cut short keeps what it measured
        done = {n: sizes[n] for n in names[: names.index(name) + 1]}
        seconds = time.perf_counter() - started
        (args.out / f"{stem}.json").write_text(json.dumps({"device": device_text(), "sizes": done, "rows": rows,
                                                           "command": command, "seconds": seconds}, indent=1) + "\n")
        (args.out / f"{stem}.md").write_text(markdown(rows, done, command, seconds, device_text()))
    print(f"wrote {args.out / stem}.json and .md in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
