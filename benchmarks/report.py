"""latest.md (tables and the issue's targets, checked) and latest.png from latest.json's content."""

from __future__ import annotations

import os
import platform
import statistics
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Context", "chart", "machine", "markdown", "targets"]

VARIANTS = ("meshify", "gspmd", "manual")


@dataclass(frozen=True)
class Context:
    """What the run was: sizes and meshes per case, the command, how long it took."""

    sizes: dict[str, dict[str, int]]
    meshes: dict[str, str]
    quick: bool
    repeats: int
    seconds: float
    command: str
    extras: dict[str, dict] = field(default_factory=dict)  # "case/mode/variant" -> {"cpu_s", "same_as_manual"}
    machine: str = field(default_factory=lambda: machine())


def machine() -> str:
    """The CPU model, the cores this process may use, and the JAX version."""
    import jax

    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (f"{model}, {cores} CPU cores, {platform.system()} {platform.release()}; jax {jax.__version__}, "
            f"8 simulated CPU devices (--xla_force_host_platform_device_count=8)")


def _rows_by(results: dict) -> dict[tuple[str, str], dict[str, dict]]:
    grouped: dict[tuple[str, str], dict[str, dict]] = {}
    for row in results["rows"]:
        grouped.setdefault((row["case"], row["mode"]), {})[row["variant"]] = row
    return grouped


def _ratio(a: float, b: float) -> float:
    return a / b if b else (1.0 if a == b else float("inf"))


def _mb(n: float) -> str:
    return f"{n / 1e6:.3f}"


def _collectives_text(row: dict) -> str:
    if not row["collectives"]:
        return "none"
    return ", ".join(f"{kind} x{count} ({_mb(size)} MB)" for kind, (count, size) in row["collectives"].items())


# -- targets ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    name: str
    met: bool
    figure: str


def _bytes_targets(groups) -> list[Target]:
    off_manual = [f"{c} {m}: meshify {_mb(v['meshify']['collective_bytes'])} MB vs manual "
                  f"{_mb(v['manual']['collective_bytes'])} MB" for (c, m), v in groups.items()
                  if abs(v["meshify"]["collective_bytes"] - v["manual"]["collective_bytes"])
                  > 0.01 * v["manual"]["collective_bytes"]]
    over_gspmd = [f"{c} {m}: meshify {_mb(v['meshify']['collective_bytes'])} MB > gspmd "
                  f"{_mb(v['gspmd']['collective_bytes'])} MB" for (c, m), v in groups.items()
                  if v["meshify"]["collective_bytes"] > v["gspmd"]["collective_bytes"]]
    return [Target("collective bytes per device = manual (within 1%), every case and mode", not off_manual,
                   "; ".join(off_manual) or f"equal on all {len(groups)} case/mode pairs"),
            Target("collective bytes per device never above gspmd", not over_gspmd,
                   "; ".join(over_gspmd) or f"at or below gspmd on all {len(groups)} case/mode pairs")]


def _cpu_ratio(extras: dict[str, dict], case: str, mode: str) -> float | None:
    mine = extras.get(f"{case}/{mode}/meshify", {}).get("cpu_s")
    theirs = extras.get(f"{case}/{mode}/gspmd", {}).get("cpu_s")
    return None if mine is None or theirs is None else _ratio(mine, theirs)


def _vocab_targets(groups, extras: dict[str, dict]) -> list[Target]:
    v = groups.get(("vocab_ce", "fwd_bwd"))
    if v is None:
        return []
    bytes_ratio = _ratio(v["meshify"]["collective_bytes"], v["gspmd"]["collective_bytes"])
    time_ratio = _ratio(v["meshify"]["step_s"], v["gspmd"]["step_s"])
    cpu_ratio = _cpu_ratio(extras, "vocab_ce", "fwd_bwd")
    cpu_text = "" if cpu_ratio is None else f" (CPU time {cpu_ratio:.3f}x)"
    floor = _floor_ratio(extras, v, "vocab_ce", "fwd_bwd")
    cpu_text += "" if floor is None else f"; the compute floor (no collectives at all) is {floor:.3f}x gspmd"
    return [Target("vocab_ce fwd_bwd: meshify bytes <= 0.45x gspmd", bytes_ratio <= 0.45,
                   f"{_mb(v['meshify']['collective_bytes'])} MB vs {_mb(v['gspmd']['collective_bytes'])} MB "
                   f"= {bytes_ratio:.3f}x"),
            Target("vocab_ce fwd_bwd: meshify step time <= 0.75x gspmd", time_ratio <= 0.75,
                   f"{v['meshify']['step_s'] * 1e3:.1f} ms vs {v['gspmd']['step_s'] * 1e3:.1f} ms = {time_ratio:.3f}x"
                   + cpu_text)]


def _floor_ratio(extras: dict[str, dict], group: dict[str, dict], case: str, mode: str) -> float | None:
    """The compute floor's step time over gspmd's (see benchmarks/manual.py's FLOOR)."""
    floor = extras.get(f"{case}/{mode}/floor")
    return None if floor is None else _ratio(floor["step_s"], group["gspmd"]["step_s"])


def _arg_temp(row: dict) -> int:
    return row["arg_bytes"] + row["temp_bytes"]


def _gspmd_memory(extras: dict[str, dict], group: dict[str, dict], case: str, mode: str) -> dict:
    """gspmd's memory given meshify's output shardings where run.py measured it (XLA picked other
    output shardings on its own, see ``run.gspmd_at_meshify_outputs``), else its row's."""
    return extras.get(f"{case}/{mode}/gspmd", {}).get("at_meshify_outputs") or group["gspmd"]


def _arg_temp_target(groups, extras: dict[str, dict]) -> list[Target]:
    """Issue #15: per-device argument + temporary bytes at most 1.05x XLA's, at the same layouts."""
    ratios = {(c, m): _ratio(_arg_temp(v["meshify"]), _arg_temp(_gspmd_memory(extras, v, c, m)))
              for (c, m), v in groups.items()}
    over = [f"{c} {m}: {r:.3f}x" for (c, m), r in ratios.items() if r > 1.05]
    worst = max(ratios, key=ratios.get)
    figure = "; ".join(over) or f"highest {ratios[worst]:.3f}x ({worst[0]} {worst[1]})"
    fsdp = groups.get(("fsdp_tp", "fwd_bwd"))
    if fsdp is not None:
        fixed = _gspmd_memory(extras, fsdp, "fsdp_tp", "fwd_bwd")
        figure += (f"; fsdp_tp fwd_bwd: {_mb(_arg_temp(fsdp['meshify']))} MB vs {_mb(_arg_temp(fixed))} MB "
                   f"= {ratios['fsdp_tp', 'fwd_bwd']:.3f}x (gspmd left to pick its outputs: "
                   f"{_mb(_arg_temp(fsdp['gspmd']))} MB, see Memory)")
    return [Target("per-device argument + temp bytes at most 1.05x gspmd's, same input and output shardings",
                   not over, figure)]


def _time_memory_targets(groups, extras: dict[str, dict]) -> list[Target]:
    ratios = [_ratio(v["meshify"]["step_s"], v["gspmd"]["step_s"]) for v in groups.values()]
    median = statistics.median(ratios)
    cpu_ratios = [r for r in (_cpu_ratio(extras, c, m) for c, m in groups) if r is not None]
    cpu_text = f"; CPU time: median {statistics.median(cpu_ratios):.3f}x" if cpu_ratios else ""
    floors = [r for r in (_floor_ratio(extras, v, c, m) for (c, m), v in groups.items()) if r is not None]
    cpu_text += f"; compute floor: median {statistics.median(floors):.3f}x" if floors else ""
    theirs = {(c, m): _gspmd_memory(extras, v, c, m)["temp_bytes"] for (c, m), v in groups.items()}
    over = [f"{c} {m}: {_mb(v['meshify']['temp_bytes'])} MB vs gspmd {_mb(theirs[c, m])} MB "
            f"({_ratio(v['meshify']['temp_bytes'], theirs[c, m]):.2f}x)" for (c, m), v in groups.items()
            if v["meshify"]["temp_bytes"] > 1.05 * theirs[c, m]]
    temp = {k: _ratio(v["meshify"]["temp_bytes"], theirs[k]) for k, v in groups.items()}
    worst = max(temp, key=temp.get)
    return [Target("median step-time ratio meshify/gspmd over all rows <= 1.0", median <= 1.0,
                   f"median {median:.3f}x (range {min(ratios):.3f}x to {max(ratios):.3f}x){cpu_text}"),
            Target("per-device temp bytes never above gspmd's by more than 5% (same output shardings)", not over,
                   "; ".join(over) or f"highest {temp[worst]:.3f}x ({worst[0]} {worst[1]})"),
            *_arg_temp_target(groups, extras)]


def _convert_targets(convert: dict) -> list[Target]:
    share = convert["lines_per_s"] / convert["libcst_parse_lines_per_s"]
    return [Target("convert >= 0.5x bare libcst parse throughput", share >= 0.5,
                   f"{convert['lines_per_s']:.0f} vs {convert['libcst_parse_lines_per_s']:.0f} lines/s = {share:.3f}x"),
            Target("rewrite <= 20 ms per function on first use", convert["rewrite_ms_per_fn"] <= 20,
                   f"{convert['rewrite_ms_per_fn']:.2f} ms"),
            Target("rewrite < 0.1 ms per function cached", convert["cached_ms_per_fn"] < 0.1,
                   f"{convert['cached_ms_per_fn'] * 1e3:.2f} us")]


def targets(results: dict, extras: dict[str, dict] | None = None) -> list[Target]:
    """The issue's targets, each met or not (by wall time), with the measured figures."""
    groups = {k: v for k, v in _rows_by(results).items() if all(x in v for x in VARIANTS)}
    extras = extras or {}
    return [*_bytes_targets(groups), *_vocab_targets(groups, extras), *_time_memory_targets(groups, extras),
            *_convert_targets(results["convert"])]


# -- markdown --------------------------------------------------------------------------------


def _extra_cells(row: dict, extras: dict[str, dict]) -> list[str]:
    key = f"{row['case']}/{row['mode']}/"
    mine, theirs = extras.get(key + row["variant"]), extras.get(key + "gspmd")
    if mine is None or theirs is None:
        return ["", "", ""]
    same = "" if row["variant"] == "manual" else ("same" if mine["same_as_manual"] else "differs")
    return [f"{mine['cpu_s'] * 1e3:.2f}", f"{_ratio(mine['cpu_s'], theirs['cpu_s']):.3f}", same]


def _row_line(row: dict, group: dict[str, dict], extras: dict[str, dict]) -> str:
    g, m = group["gspmd"], group["manual"]
    cells = [row["case"], row["mode"], row["variant"], _collectives_text(row), _mb(row["collective_bytes"]),
             f"{_ratio(row['collective_bytes'], m['collective_bytes']):.3f}",
             f"{_ratio(row['collective_bytes'], g['collective_bytes']):.3f}",
             _mb(row["temp_bytes"]), _mb(row["arg_bytes"]), f"{row['compile_s']:.2f}",
             f"{row['step_s'] * 1e3:.2f}", f"{_ratio(row['step_s'], g['step_s']):.3f}", *_extra_cells(row, extras),
             f"{row['max_abs_err']:.1e}"]
    return "| " + " | ".join(cells) + " |"


def _rows_table(results: dict, extras: dict[str, dict]) -> list[str]:
    head = ["case", "mode", "variant", "collectives (count, bytes per device)", "MB/device", "x manual", "x gspmd",
            "temp MB", "arg MB", "compile s", "step ms", "time x gspmd", "CPU ms", "CPU x gspmd", "program vs manual",
            "max abs err"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, group in _rows_by(results).items():
        lines += [_row_line(group[v], group, extras) for v in VARIANTS if v in group]
    return lines


def _section(title: str, prose: str, head: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown section: its title, a paragraph and a table; nothing at all without rows."""
    if not rows:
        return []
    return [f"## {title}", "", prose, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head),
            *("| " + " | ".join(row) + " |" for row in rows), ""]


def _floor_section(results: dict, extras: dict[str, dict]) -> list[str]:
    """How close each variant is to the compute floor: the manual program with every collective
    removed, in one shard_map (benchmarks/manual.py's FLOOR), timed in the same interleaved runs."""
    rows = []
    for (case, mode), group in _rows_by(results).items():
        floor = extras.get(f"{case}/{mode}/floor")
        if floor is not None:
            rows.append([case, mode, _mb(floor["collective_bytes"]), f"{floor['step_s'] * 1e3:.2f}",
                         f"{_ratio(floor['step_s'], group['gspmd']['step_s']):.3f}",
                         *(f"{_ratio(group[v]['step_s'], floor['step_s']):.3f}" for v in VARIANTS)])
    return _section("Compute floor",
                    "The floor is the manual variant's per-device arithmetic with every collective removed (wrong "
                    "numbers, on purpose; the floor MB column is the collective bytes its compiled HLO still has), "
                    "timed in the same interleaved runs. A program doing this per-device arithmetic cannot step "
                    "faster than it on this machine, whatever it communicates (gspmd can, where XLA compiles the "
                    "same math to cheaper per-device code).",
                    ["case", "mode", "floor MB", "floor ms", "floor x gspmd", "meshify x floor", "gspmd x floor",
                     "manual x floor"], rows)


def _memory_section(results: dict, extras: dict[str, dict]) -> list[str]:
    """Argument + temp bytes per device of each variant, with gspmd's output bytes beside them:
    where XLA, left to choose, returns a value in another layout than meshify (gradients
    replicated instead of in their weights' layout), that value counts as output, not temporary,
    and gspmd is measured again given meshify's output shardings."""
    rows = []
    for (case, mode), group in _rows_by(results).items():
        gspmd = extras.get(f"{case}/{mode}/gspmd")
        if gspmd is not None:
            mine, theirs, fixed = _arg_temp(group["meshify"]), _arg_temp(group["gspmd"]), gspmd["at_meshify_outputs"]
            rows.append([case, mode, _mb(mine), _mb(_arg_temp(group["manual"])), _mb(theirs), _mb(gspmd["out_bytes"]),
                         "" if fixed is None else _mb(_arg_temp(fixed)), f"{_ratio(mine, theirs):.3f}",
                         "" if fixed is None else f"{_ratio(mine, _arg_temp(fixed)):.3f}"])
    return _section("Memory",
                    "Per device, from `compiled.memory_analysis()`: argument + temp MB of each variant, gspmd's "
                    "output MB, and gspmd compiled again with `out_shardings` set to meshify's where it chose other "
                    "output shardings on its own (`at meshify's outputs`; empty where they agree).",
                    ["case", "mode", "meshify arg+temp MB", "manual arg+temp MB", "gspmd arg+temp MB", "gspmd out MB",
                     "gspmd at meshify's outputs arg+temp MB", "meshify x gspmd",
                     "meshify x gspmd at meshify's outputs"], rows)


def markdown(results: dict, context: Context) -> str:
    """latest.md: the run, the targets, every row, and convert's speed."""
    from benchmarks.convert_speed import FUNCTIONS, generate_module

    convert = results["convert"]
    module_lines = generate_module().count("\n")
    lines = ["# Benchmarks: meshify vs XLA's partitioner (gspmd) vs hand-written shard_map (manual)", "",
             f"`{context.command}`: {'quick (small) sizes' if context.quick else 'full sizes'}, "
             f"{context.repeats} interleaved timed runs per variant, {context.seconds:.0f} s in all.", "",
             f"Machine: {context.machine}. Wall times on simulated devices share the same cores and are noisy: "
             "compare ratios within this run.", "",
             "| case | mesh | sizes |", "|---|---|---|"]
    lines += [f"| {c} | {context.meshes.get(c, '')} | {', '.join(f'{k}={v}' for k, v in s.items())} |"
              for c, s in context.sizes.items()]
    lines += ["", "## Targets", "", "| target | met | measured |", "|---|---|---|"]
    lines += [f"| {t.name} | {'yes' if t.met else '**no**'} | {t.figure} |" for t in targets(results, context.extras)]
    lines += ["", "## Rows", "",
              "Bytes are per device, from the compiled HLO's collective result shapes (meshify.runtime.hlo); "
              "temp and arg bytes from `compiled.memory_analysis()`; step ms is the median wall time, CPU ms the "
              "median CPU time of this process (all threads) for the same calls; program vs manual says whether the "
              "compiled HLO is the manual variant's, up to names and source locations; max abs err is "
              "against the single-device run (lm_step fwd_bwd: the updated parameters, optimizer state and "
              "loss after one adamw step).", "", *_rows_table(results, context.extras), "",
              *_memory_section(results, context.extras), *_floor_section(results, context.extras),
              "## Rewrite speed", "",
              f"Generated module: {module_lines:,} lines, {FUNCTIONS} `@mesh` functions. "
              f"`convert`: {convert['lines_per_s']:.0f} lines/s; "
              f"bare `libcst.parse_module`: {convert['libcst_parse_lines_per_s']:.0f} lines/s. Decorator rewrite "
              f"(`MeshFunction._build()`, no XLA): {convert['rewrite_ms_per_fn']:.2f} ms per function on first use "
              "(the module's one parse shared by its functions), "
              f"{convert['cached_ms_per_fn'] * 1e3:.2f} us cached.", ""]
    return "\n".join(lines)


# -- chart -----------------------------------------------------------------------------------


def chart(results: dict, path: Path, machine_text: str | None = None, extras: dict[str, dict] | None = None) -> None:
    """Collective MB per device (log scale) and step time relative to gspmd, per case and mode
    (with the compute floor, where ``extras`` has it, as a black bar across each group)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = _rows_by(results)
    labels = [f"{c}\n{m}" for c, m in groups]
    sizes = [r["collective_bytes"] / 1e6 for r in results["rows"]]
    floor = min((mb for mb in sizes if mb > 0), default=1.0) / 10
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(12, 7.5), sharex=True)
    width, colors = 0.27, {"meshify": "#1f77b4", "gspmd": "#ff7f0e", "manual": "#2ca02c"}
    for k, variant in enumerate(VARIANTS):
        xs = [i + (k - 1) * width for i in range(len(groups))]
        mbs = [g[variant]["collective_bytes"] / 1e6 for g in groups.values()]
        top.bar(xs, [max(mb, floor) for mb in mbs], width, label=variant, color=colors[variant])
        for x, mb in zip(xs, mbs, strict=True):
            top.text(x, max(mb, floor) * 1.15, f"{mb:.3g}", ha="center", va="bottom", fontsize=6, rotation=90)
        ratios = [_ratio(g[variant]["step_s"], g["gspmd"]["step_s"]) for g in groups.values()]
        bottom.bar(xs, ratios, width, color=colors[variant])
    floors = [_floor_ratio(extras or {}, g, c, m) for (c, m), g in groups.items()]
    for i, ratio in enumerate(floors):
        if ratio is not None:
            bottom.hlines(ratio, i - 1.5 * width, i + 1.5 * width, colors="black", linewidth=2.5,
                          label="compute floor (no collectives)" if i == 0 else None)
    if any(r is not None for r in floors):
        bottom.legend(loc="lower left", fontsize=8)
    top.set_yscale("log")
    top.set_ylim(floor, max(sizes) * 20)
    top.set_ylabel("collective MB per device (log)")
    top.legend(loc="upper left", ncol=3)
    bottom.axhline(1.0, color="black", linewidth=0.8)
    bottom.set_ylabel("median step time / gspmd's")
    bottom.set_xticks(range(len(groups)), labels, fontsize=8)
    title = "meshify vs gspmd vs manual shard_map, 2x4 simulated CPU mesh (fsdp_tp: 4x2, dp_mlp: 8)"
    fig.suptitle(title + (f"\n{machine_text}" if machine_text else ""), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
