"""Where the per-device memory of the ``fsdp_tp`` training step goes (issue #15), against XLA's partitioner.

The ``fsdp_tp`` case (benchmarks/cases.py: stacked GPT-2 blocks run by ``jax.lax.scan``, FSDP over
'data' x TP over 'model' on 4x2, full sizes) compiled as ``value_and_grad`` six ways:

- ``meshify``: the ``@mesh`` function (its default ``regather=True``: the scan body runs under
  ``mr.regathering``, ``jax.checkpoint`` with a policy that saves all but the FSDP gathers' results,
  so that the backward pass gathers each layer's weights again, as ZeRO-3 / PyTorch FSDP reshard
  after the forward pass, instead of keeping every layer's gathered copies until then);
- ``meshify_keep``: the same function under ``@mesh(..., regather=False)``;
- ``manual``: the hand-written shard_map (benchmarks/manual.py), regathering as meshify does;
- ``manual_keep``: the same, keeping the gathered weights;
- ``gspmd``: XLA's partitioner with the same input shardings, left to pick its output shardings;
- ``gspmd_at_meshify_outputs``: the same, given meshify's output shardings (every gradient in its
  weight's layout).

For each: ``compiled.memory_analysis()`` (argument, temp, output bytes), collective bytes, the
all_gathers before XLA's passes (the lowered program) and after, and from XLA's own buffer
assignment report (``--xla_dump_to``): the bytes live at the peak of the schedule
(``live_peak_bytes``, arguments and outputs included) and the bytes all buffers take once
packed into memory (``packed_bytes`` = argument + temp + output).  Printed and saved to
``benchmarks/results/fsdp_tp/memory.json``::

    python benchmarks/fsdp_memory.py            # about a minute on 2 cores
    python benchmarks/fsdp_memory.py --quick    # run.py's quick sizes (memory_quick.json)
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

DUMP = tempfile.mkdtemp(prefix="meshify_fsdp_memory_")
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
                           f" --xla_dump_to={DUMP}").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

import jax  # noqa: E402

from benchmarks import cases, manual, run  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "fsdp_tp"


def _programs(bench: run.Bench) -> dict[str, tuple]:
    """Each variant's program and its ``jax.jit`` options."""
    argnums = tuple(range(len(bench.args)))
    keep = manual.fsdp_tp(cases.fsdp_tp.sharded.mesh, regather=False)
    meshify_outputs = jax.jit(bench.variants["meshify"]).lower(*bench.args).compile().output_shardings
    return {"meshify": (bench.variants["meshify"], {}),
            "meshify_keep": (run._loss_and_grads(cases.fsdp_tp_keep, argnums, False), {}),
            "manual": (bench.variants["manual"], {}),
            "manual_keep": (run._loss_and_grads(keep, argnums, False), {}),
            "gspmd": (bench.variants["gspmd"], {}),
            "gspmd_at_meshify_outputs": (bench.variants["gspmd"], {"out_shardings": meshify_outputs})}


def _new_report(before: set[str], suffix: str) -> str:
    """The text of the one XLA report file ending in ``suffix`` written since ``before``."""
    [name] = [n for n in set(os.listdir(DUMP)) - before if n.endswith(suffix)]
    return (Path(DUMP) / name).read_text()


def _live_peak(live_ranges: str) -> int:
    """The bytes live at the schedule's peak: the last cumulative figure of the "(peak):" list."""
    block = live_ranges[live_ranges.index("(peak):"):].split("Stack trace breakdown")[0]
    return max(int(n) for n in re.findall(r"cumulative: (\d+) bytes", block))


def measure(program, options: dict, args: tuple) -> dict:
    jax.clear_caches()  # compiled anew, so that XLA writes its reports for this program
    before = set(os.listdir(DUMP))
    lowered = jax.jit(program, **options).lower(*args)
    compiled = lowered.compile()
    memory = compiled.memory_analysis()
    gathers = run.summarize(run.collectives(compiled.as_text())).get("all-gather", (0, 0))
    return {"arg_bytes": int(memory.argument_size_in_bytes), "temp_bytes": int(memory.temp_size_in_bytes),
            "out_bytes": int(memory.output_size_in_bytes), "collective_bytes": run._collective_bytes(compiled),
            "all_gathers_lowered": lowered.as_text().count('"stablehlo.all_gather"'),
            "all_gathers_compiled": int(gathers[0]),
            "live_peak_bytes": _live_peak(_new_report(before, "cpu_after_optimizations-live-range.txt")),
            "packed_bytes": int(re.search(r"Total bytes: (\d+)", _new_report(
                before, "cpu_after_optimizations-memory-usage-report.txt"))[1])}


def _line(name: str, r: dict, base: dict) -> str:
    arg_temp = r["arg_bytes"] + r["temp_bytes"]
    ratio = arg_temp / (base["arg_bytes"] + base["temp_bytes"])
    return (f"{name:<25} {arg_temp / 1e6:9.3f} {ratio:7.3f}x {r['out_bytes'] / 1e6:8.3f} "
            f"{r['live_peak_bytes'] / 1e6:9.3f} {r['packed_bytes'] / 1e6:8.3f} {r['collective_bytes'] / 1e6:8.3f} "
            f"{r['all_gathers_lowered']:>5} -> {r['all_gathers_compiled']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="run.py's quick sizes")
    parser.add_argument("--out", type=Path, help="the JSON file (default: benchmarks/results/fsdp_tp/memory.json)")
    args = parser.parse_args(argv)
    out = args.out or RESULTS / ("memory_quick.json" if args.quick else "memory.json")
    sizes = run.SIZES["quick" if args.quick else "full"]["fsdp_tp"]
    bench = run.make_bench("fsdp_tp", "fwd_bwd", sizes)
    try:
        rows = {name: measure(program, options, bench.args) for name, (program, options) in _programs(bench).items()}
    finally:
        shutil.rmtree(DUMP, ignore_errors=True)
    base = rows["gspmd_at_meshify_outputs"]
    print(f"{'MB per device':<25} {'arg+temp':>9} {'x gspmd*':>8} {'out':>8} {'live peak':>9} {'packed':>8} "
          f"{'coll.':>8} all_gathers lowered -> compiled   (* at meshify's output shardings)")
    for name, r in rows.items():
        print(_line(name, r, base))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"command": "python benchmarks/fsdp_memory.py" + (" --quick" if args.quick else ""),
                               "jax": jax.__version__, "mesh": run._mesh_text(cases.fsdp_tp), "sizes": sizes,
                               "mode": "fwd_bwd", "variants": rows}, indent=1) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
