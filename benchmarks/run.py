"""meshify against XLA's automatic partitioner and hand-written shard_map, in one run.

For each case and mode (``fwd``, ``fwd_bwd``) three variants of the same math run on
the same data and mesh (2x4 simulated CPU devices; 8 for ``dp_mlp``):

- ``meshify``: the ``@mesh`` function (``benchmarks/cases.py``);
- ``gspmd``: its plain ``.reference`` under ``jax.jit`` with ``NamedSharding`` inputs on
  the same ``AxisType.Auto`` mesh (XLA's partitioner picks the communication);
- ``manual``: the hand-written Megatron-style ``jax.shard_map`` (``benchmarks/manual.py``).

Each row records the max abs difference from the single-device run, the collectives in
the compiled HLO (``meshify.runtime.hlo``), per-device temp and argument bytes, compile
seconds and the median step seconds over interleaved runs.  Where XLA, left to pick its output
shardings, picks others than meshify's (fsdp_tp's gradients), gspmd is compiled once more with
meshify's, so that memory is also compared at the same layouts in and out.  Then ``convert``'s
throughput and the decorator's rewrite time (``benchmarks/convert_speed.py``).

    python benchmarks/run.py            # full sizes (B=16, L=128, D=512, V=32768), ~10 min on 2 cores
    python benchmarks/run.py --quick    # small sizes, under 2 minutes
"""

from __future__ import annotations

import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

from benchmarks import cases, manual  # noqa: E402
from meshify.runtime.hlo import collectives, summarize  # noqa: E402

VARIANTS = ("meshify", "gspmd", "manual")
MODES = ("fwd", "fwd_bwd")
CASES = ("ffn", "block", "fsdp_tp", "vocab_ce", "dp_mlp", "lm_step")

SIZES = {
    "full": {
        "ffn": dict(B=16, L=128, D=512, F=2048),
        "block": dict(B=16, L=128, D=512, H=8, K=64, F=2048),
        "fsdp_tp": dict(B=16, L=128, D=512, H=8, K=64, F=2048, layers=2),
        "vocab_ce": dict(B=16, L=128, D=512, V=32768),
        "dp_mlp": dict(B=1024, I=512, F=2048, O=512),
        "lm_step": dict(B=16, L=128, D=256, H=8, K=32, F=1024, V=8192, layers=2),
    },
    "quick": {
        "ffn": dict(B=4, L=16, D=64, F=256),
        "block": dict(B=4, L=16, D=64, H=8, K=8, F=256),
        "fsdp_tp": dict(B=4, L=16, D=64, H=8, K=8, F=256, layers=2),
        "vocab_ce": dict(B=4, L=16, D=64, V=1024),
        "dp_mlp": dict(B=64, I=64, F=256, O=64),
        "lm_step": dict(B=4, L=16, D=64, H=8, K=8, F=256, V=512, layers=1),
    },
}


@dataclass(frozen=True)
class Bench:
    """One (case, mode): a traceable program per variant, the single-device program, the data."""

    case: str
    mode: str
    variants: dict[str, Callable]
    reference: Callable
    args: tuple  # placed on the mesh in meshify's shardings (the same for every variant)
    host_args: tuple  # the same values on the host, for the single-device run
    mesh: str
    floor: Callable  # the manual variant's per-device program with no collectives (see manual.FLOOR)


# -- data ------------------------------------------------------------------------------------


def _normal(rng: np.random.Generator, *shape: int, scale: float = 1.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _ffn_args(s: dict, rng: np.random.Generator) -> list[np.ndarray]:
    B, L, D, F = s["B"], s["L"], s["D"], s["F"]
    return [_normal(rng, B, L, D), _normal(rng, D, F, scale=D ** -0.5), _normal(rng, F, scale=0.1),
            _normal(rng, F, D, scale=F ** -0.5)]


def _block_args(s: dict, rng: np.random.Generator) -> list[np.ndarray]:
    B, L, D, H, K, F = s["B"], s["L"], s["D"], s["H"], s["K"], s["F"]
    qkv = [_normal(rng, D, H, K, scale=D ** -0.5) for _ in range(3)]
    return [_normal(rng, B, L, D), 1 + _normal(rng, D, scale=0.1), *qkv, _normal(rng, H, K, D, scale=(H * K) ** -0.5),
            1 + _normal(rng, D, scale=0.1), _normal(rng, D, F, scale=D ** -0.5), _normal(rng, F, D, scale=F ** -0.5)]


def _gpt2_args(s: dict, rng: np.random.Generator) -> list[np.ndarray]:
    """fsdp_tp's activations and its ``layers`` stacked GPT-2 blocks' weights, in cases.fsdp_tp's order."""
    n, B, L, D, H, K, F = s["layers"], s["B"], s["L"], s["D"], s["H"], s["K"], s["F"]

    def norm() -> list[np.ndarray]:
        return [1 + _normal(rng, n, D, scale=0.1), _normal(rng, n, D, scale=0.1)]

    qkv = [_normal(rng, n, D, H, K, scale=D ** -0.5) for _ in range(3)]
    return [_normal(rng, B, L, D), *norm(), *qkv, _normal(rng, n, H, K, D, scale=(H * K) ** -0.5), *norm(),
            _normal(rng, n, D, F, scale=D ** -0.5), _normal(rng, n, F, scale=0.1),
            _normal(rng, n, F, D, scale=F ** -0.5), _normal(rng, n, D, scale=0.1)]


def _tokens(s: dict, rng: np.random.Generator) -> list[np.ndarray]:
    return [rng.integers(0, s["V"], (s["B"], s["L"])).astype(np.int32) for _ in range(2)]


def _vocab_ce_args(s: dict, rng: np.random.Generator) -> list[np.ndarray]:
    D, V = s["D"], s["V"]
    return [*_tokens(s, rng), _normal(rng, V, D), _normal(rng, D, V, scale=D ** -0.5)]


def _dp_mlp_args(s: dict, rng: np.random.Generator) -> list[np.ndarray]:
    B, I, F, O = s["B"], s["I"], s["F"], s["O"]  # noqa: E741
    return [_normal(rng, B, I), _normal(rng, I, F, scale=I ** -0.5), _normal(rng, F, scale=0.1),
            _normal(rng, F, O, scale=F ** -0.5)]


def _lm_params(s: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """``examples/transformer_lm.py``'s parameters (its ``init_params``) at these sizes."""
    n, D, H, K, F, V = s["layers"], s["D"], s["H"], s["K"], s["F"], s["V"]
    return {"embed": _normal(rng, V, D, scale=D ** -0.5), "norm1": np.ones((n, D), np.float32),
            **{w: _normal(rng, n, D, H, K, scale=D ** -0.5) for w in ("wq", "wk", "wv")},
            "wo": _normal(rng, n, H, K, D, scale=(H * K) ** -0.5), "norm2": np.ones((n, D), np.float32),
            "w1": _normal(rng, n, D, F, scale=D ** -0.5), "w2": _normal(rng, n, F, D, scale=F ** -0.5),
            "norm_f": np.ones((D,), np.float32)}


#: Each array case's host arguments, in its ``@mesh`` function's order.
HOST_ARGS = {"ffn": _ffn_args, "block": _block_args, "fsdp_tp": _gpt2_args, "vocab_ce": _vocab_ce_args,
             "dp_mlp": _dp_mlp_args}


# -- programs --------------------------------------------------------------------------------


def _loss_and_grads(fn: Callable, argnums: tuple[int, ...], scalar: bool) -> Callable:
    """fwd_bwd: the loss (the output, or the mean square of an array output) and its gradients."""
    def loss(*args):
        out = fn(*args)
        return out if scalar else jnp.mean(jnp.square(out))

    return jax.value_and_grad(loss, argnums=argnums)


def _array_bench(name: str, mode: str, size: dict, rng: np.random.Generator) -> Bench:
    fn = getattr(cases, name)
    host = HOST_ARGS[name](size, rng)
    programs = {"meshify": fn, "gspmd": fn.reference, "manual": getattr(manual, name)(fn.sharded.mesh)}
    reference, floor = fn.reference, getattr(manual, name)(fn.sharded.mesh, manual.FLOOR)
    if mode == "fwd_bwd":
        argnums = tuple(i for i, a in enumerate(host) if a.dtype.kind == "f")
        scalar = name == "vocab_ce"
        programs = {v: _loss_and_grads(p, argnums, scalar) for v, p in programs.items()}
        reference, floor = _loss_and_grads(reference, argnums, scalar), _loss_and_grads(floor, argnums, scalar)
    return Bench(name, mode, programs, reference, tuple(fn.place(*host)), tuple(host), _mesh_text(fn), floor)


def _lm_bench(mode: str, size: dict, rng: np.random.Generator) -> Bench:
    """lm_step: the LM's loss (fwd), or one full optax adamw step of it (fwd_bwd)."""
    import optax
    import transformer_lm as lm

    params = _lm_params(size, rng)
    tokens, targets = _tokens(size, rng)
    placed = lm.lm_loss.place(tokens, targets, **params)
    losses = {"meshify": lm.lm_loss, "gspmd": lm.lm_loss.reference, "manual": manual.lm_loss(lm.lm_loss.sharded.mesh)}
    floor = manual.lm_loss(lm.lm_loss.sharded.mesh, manual.FLOOR)
    if mode == "fwd":
        return Bench("lm_step", mode, losses, lm.lm_loss.reference, placed, (tokens, targets, *params.values()),
                     _mesh_text(lm.lm_loss), floor)
    optimizer = optax.adamw(3e-3, weight_decay=0.01)
    steps = {v: lm.make_step(loss, optimizer) for v, loss in losses.items()}
    mesh_params = dict(zip(params, placed[2:], strict=True))
    args = (mesh_params, optimizer.init(mesh_params), placed[0], placed[1])
    host = (params, optimizer.init(params), tokens, targets)
    return Bench("lm_step", mode, steps, lm.make_step(lm.lm_loss.reference, optimizer), args, host,
                 _mesh_text(lm.lm_loss), lm.make_step(floor, optimizer))


def _mesh_text(fn) -> str:
    spec = fn.mesh_spec
    axes = ", ".join(f"{n}={s}" for n, s in zip(spec.names, spec.sizes, strict=True))
    return "x".join(str(s) for s in spec.sizes) + f" ({axes})"


def make_bench(name: str, mode: str, size: dict, seed: int = 0) -> Bench:
    rng = np.random.default_rng(seed)
    return _lm_bench(mode, size, rng) if name == "lm_step" else _array_bench(name, mode, size, rng)


# -- measuring -------------------------------------------------------------------------------


def _max_abs_err(got, want) -> float:
    leaves = zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True)
    return max((float(np.max(np.abs(np.asarray(g, np.float64) - np.asarray(w, np.float64)), initial=0.0))
                for g, w in leaves), default=0.0)


def _compile(program: Callable, args: tuple):
    """Traces, lowers and compiles ``program`` for ``args``; returns it and the seconds taken."""
    start = time.perf_counter()
    compiled = jax.jit(program).lower(*args).compile()
    return compiled, time.perf_counter() - start


def _memory(compiled) -> dict[str, int]:
    """Per-device argument, temporary and output bytes of a compiled program."""
    memory = compiled.memory_analysis()
    return {"arg_bytes": int(memory.argument_size_in_bytes), "temp_bytes": int(memory.temp_size_in_bytes),
            "out_bytes": int(memory.output_size_in_bytes)}


def _collective_bytes(compiled) -> int:
    return int(sum(size for _, size in summarize(collectives(compiled.as_text())).values()))


def _row(bench: Bench, variant: str, compiled, compile_s: float, want) -> dict:
    summary = summarize(collectives(compiled.as_text()))
    memory = _memory(compiled)
    return {"case": bench.case, "mode": bench.mode, "variant": variant,
            "max_abs_err": _max_abs_err(compiled(*bench.args), want),
            "collective_bytes": _collective_bytes(compiled),
            "collectives": {kind: [int(count), int(size)] for kind, (count, size) in summary.items()},
            "temp_bytes": memory["temp_bytes"], "arg_bytes": memory["arg_bytes"],
            "compile_s": round(compile_s, 4), "step_s": float("nan")}


def _same_output_shardings(a, b) -> bool:
    return all(x.sharding.is_equivalent_to(y.sharding, len(x.shape))
               for x, y in zip(jax.tree.leaves(a.out_info), jax.tree.leaves(b.out_info), strict=True))


def gspmd_at_meshify_outputs(bench: Bench, compiled: dict) -> dict | None:
    """XLA's partitioner told to return meshify's output shardings, where on its own it picks
    others: its memory and collective bytes; None where the shardings already agree.

    Left free, XLA may return a gradient in another layout than its parameter's (fsdp_tp: the
    weights' gradients all-reduced and replicated over 'batch' instead of reduce-scattered to
    the weights' layout), which moves the whole gradients from temporaries to outputs; meshify
    returns each gradient in its parameter's layout, as an optimizer sharded like the weights
    needs them.  Memory is compared at the same layouts in and out.
    """
    if _same_output_shardings(compiled["meshify"], compiled["gspmd"]):
        return None
    shardings = jax.tree.map(lambda out: out.sharding, compiled["meshify"].out_info)
    fixed = jax.jit(bench.variants["gspmd"], out_shardings=shardings).lower(*bench.args).compile()
    return {**_memory(fixed), "collective_bytes": _collective_bytes(fixed)}


def _step_times(bench: Bench, compiled: dict, repeats: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall and CPU seconds per call, the variants interleaved so that noise hits all alike.

    CPU seconds (this process, all threads) are reported beside wall seconds because the
    machine is shared: other processes stretch wall time but not the CPU time we use.
    """
    wall: dict[str, list[float]] = {v: [] for v in compiled}
    cpu: dict[str, list[float]] = {v: [] for v in compiled}
    for _ in range(repeats):
        for variant, program in compiled.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            jax.block_until_ready(program(*bench.args))
            wall[variant].append(time.perf_counter() - start)
            cpu[variant].append(time.process_time() - start_cpu)
    return ({v: statistics.median(t) for v, t in wall.items()}, {v: statistics.median(t) for v, t in cpu.items()})


def program_text(compiled) -> str:
    """The compiled HLO up to names: no module name, source locations or stack frames, and every
    instruction and computation renamed by order of first appearance (``%mul.86`` -> ``%7``)."""
    text = re.sub(r", metadata=\{[^}]*\}", "", compiled.as_text())
    text = re.sub(r"(?m)^(FileNames|FunctionNames|FileLocations|StackFrames)\n(?:\d+ .*\n)*", "", text)
    text = re.sub(r"^HloModule \S+", "HloModule", text)
    names: dict[str, str] = {}
    return re.sub(r"%?\b[A-Za-z_][\w\-]*(?:\.\d+)+(?:\.clone(?:\.\d+)*)?\b|%[\w.\-]+",
                  lambda m: names.setdefault(m[0].lstrip("%"), f"%{len(names)}"), text)


def floor_program(bench: Bench, manual_compiled) -> Callable:
    """The compute floor: ``bench.floor`` (value, gradients and optimizer step included) in one
    shard_map over the same shardings as the manual variant, with no collective at all."""
    named = jax.sharding.NamedSharding
    mesh = next(a.sharding.mesh for a in jax.tree.leaves(bench.args) if isinstance(a.sharding, named))
    in_specs = jax.tree.map(lambda a: a.sharding.spec if isinstance(a.sharding, named) else P(), bench.args)
    out_specs = jax.tree.map(lambda s: s.spec if isinstance(s, named) else P(), manual_compiled.output_shardings)
    return jax.shard_map(bench.floor, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)


def measure(bench: Bench, repeats: int) -> tuple[list[dict], dict[str, dict]]:
    """The three rows of one (case, mode), and per variant what latest.json has no place for:
    ``cpu_s`` (median CPU seconds per step), ``same_as_manual`` (the same compiled program) and
    ``out_bytes``; under ``gspmd``, ``at_meshify_outputs`` (see :func:`gspmd_at_meshify_outputs`);
    under ``floor``, the compute floor's ``step_s``, ``cpu_s`` and ``collective_bytes`` (0)."""
    want = jax.block_until_ready(jax.jit(bench.reference)(*bench.host_args))  # on one device, done before timing
    compiled, rows = {}, {}
    for variant in VARIANTS:
        compiled[variant], seconds = _compile(bench.variants[variant], bench.args)
        rows[variant] = _row(bench, variant, compiled[variant], seconds, want)  # also the warm-up run
    compiled["floor"], _ = _compile(floor_program(bench, compiled["manual"]), bench.args)
    jax.block_until_ready(compiled["floor"](*bench.args))  # warm-up
    wall, cpu = _step_times(bench, compiled, repeats)
    manual_text = program_text(compiled["manual"])
    extras = {v: {"cpu_s": cpu[v], "same_as_manual": program_text(compiled[v]) == manual_text,
                  "out_bytes": _memory(compiled[v])["out_bytes"]} for v in VARIANTS}
    extras["gspmd"]["at_meshify_outputs"] = gspmd_at_meshify_outputs(bench, compiled)
    extras["floor"] = {"step_s": wall["floor"], "cpu_s": cpu["floor"],
                       "collective_bytes": _collective_bytes(compiled["floor"])}
    for variant in VARIANTS:
        rows[variant]["step_s"] = wall[variant]
    return [rows[v] for v in VARIANTS], extras


# -- driver ----------------------------------------------------------------------------------


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _arg_temp(row: dict) -> int:
    return row["arg_bytes"] + row["temp_bytes"]


def _memory_text(rows: list[dict], gspmd: dict) -> str:
    """meshify's argument + temp bytes per device against gspmd's (and against gspmd given
    meshify's output shardings, where it picks others)."""
    mine, theirs = (_arg_temp(next(r for r in rows if r["variant"] == v)) for v in ("meshify", "gspmd"))
    text = f"arg+temp: meshify {mine / 1e6:.3f} MB = {mine / theirs:.3f}x gspmd"
    fixed = gspmd.get("at_meshify_outputs")
    return text if fixed is None else text + f", {mine / _arg_temp(fixed):.3f}x gspmd at meshify's outputs"


def run_cases(names: list[str], sizes: dict, repeats: int) -> tuple[list[dict], dict[str, str], dict[str, dict]]:
    """Every row; each case's mesh; each row's extras (see ``measure``) by "case/mode/variant"."""
    rows, meshes, extras = [], {}, {}
    for name in names:
        for mode in MODES:
            start = time.perf_counter()
            bench = make_bench(name, mode, sizes[name])
            meshes[name] = bench.mesh
            found, more = measure(bench, repeats)
            rows.extend(found)
            extras.update({f"{name}/{mode}/{v}": e for v, e in more.items()})
            _log(f"{name:>8} {mode:<7} " + "  ".join(
                f"{r['variant']}: {r['collective_bytes'] / 1e6:.3f} MB {r['step_s'] * 1e3:.1f} ms "
                f"(CPU {more[r['variant']]['cpu_s'] * 1e3:.1f}) err {r['max_abs_err']:.1e}" for r in found)
                 + f"  floor: {more['floor']['step_s'] * 1e3:.1f} ms"
                 + f"  same program: {more['meshify']['same_as_manual']}  {_memory_text(found, more['gspmd'])}"
                 + f"  ({time.perf_counter() - start:.0f} s)")
    return rows, meshes, extras


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (CI), under 2 minutes")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results", help="results folder")
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per variant, interleaved (>= 7)")
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated subset of " + ",".join(CASES))
    parser.add_argument("--no-chart", action="store_true", help="skip the PNG chart (no matplotlib needed)")
    args = parser.parse_args(argv)
    names = [c for c in args.cases.split(",") if c]
    unknown = sorted(set(names) - set(CASES))
    if unknown:
        parser.error(f"unknown cases {unknown}; choose from {list(CASES)}")
    if args.repeats < 7:
        parser.error("--repeats must be at least 7")
    from benchmarks import convert_speed, report

    started = time.perf_counter()
    sizes = SIZES["quick" if args.quick else "full"]
    rows, meshes, extras = run_cases(names, sizes, args.repeats)
    convert = convert_speed.measure(quick=args.quick)
    _log(f" convert {convert}")
    results = {"rows": rows, "convert": convert}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "latest.json").write_text(json.dumps(results, indent=1) + "\n")
    context = report.Context(sizes={n: sizes[n] for n in names}, meshes=meshes, quick=args.quick,
                             repeats=args.repeats, seconds=time.perf_counter() - started, extras=extras,
                             command="python benchmarks/run.py" + (" --quick" if args.quick else ""))
    (args.out / "latest.md").write_text(report.markdown(results, context))
    if not args.no_chart:
        report.chart(results, args.out / "latest.png", context.machine, extras)
    _log(f"wrote {args.out / 'latest.json'} and latest.md{'' if args.no_chart else ', latest.png'} "
         f"in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
