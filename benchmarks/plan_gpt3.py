"""``meshify plan`` on GPT-3 175B dims, 64 and 1024 H100s with 80 GiB each (issue #16).

    python benchmarks/plan_gpt3.py     # prints and writes benchmarks/results/plan_gpt3.json

The function is ``examples/transformer_lm.py::lm_loss``: a pre-norm decoder with a tied embedding,
GPT-3's architecture (dense attention in every layer), its 96 layers a Python loop.  The dims are
GPT-3 175B's (Brown et al. 2020): d_model 12288, 96 heads of 128, d_ff 49152, 96 layers, 2048
tokens, the vocabulary padded to 51,200 as Megatron-LM pads it, and a global batch of 1536.

plan costs one call of the function with nothing rematerialised.  At 1536 sequences per call no
layout fits 80 GiB on either device count (the activations saved for the backward pass alone exceed
it), so the batch is then run as micro-batches, as gradient accumulation (and Megatron-LM's
pipeline) runs it: the largest micro-batch of the 1536 for which some layout fits is planned, and
its pick is shown beside two layouts costed the same way (``meshify.plan.cost_layout``): pure data
parallelism at one sequence per device (the least memory it can have) and Megatron-LM's tensor
parallelism (heads, d_ff and vocab over 8 GPUs of one NVLink domain, data parallelism across).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILE = ROOT / "examples" / "transformer_lm.py"
DIMS = {"batch": 1536, "length": 2048, "d_model": 12288, "heads": 96, "d_head": 128, "d_ff": 49152,
        "vocab": 51200, "layers": 96}
DEVICES = (64, 1024)
MEMORY = "80GiB"
GiB = 1 << 30
#: Megatron-LM's tensor parallelism: heads, d_ff and vocab split over 8 GPUs of one NVLink domain.
MEGATRON = {"batch": "data", "vocab": "model", "heads": "model", "d_ff": "model"}


def _row(c) -> dict:
    """One candidate as the results file shows it (bytes in GiB, times in seconds)."""
    return {"decorator": c.decorator, "fits": c.fits, "time_s": round(c.time_s, 3), "dominant": c.dominant,
            "compute_s": round(c.compute_s, 3),
            "communication_s": {k: round(v, 3) for k, v in c.comm_s.items()},
            "collective_gib": round(c.collective_bytes / GiB, 2),
            "memory_gib": {k: round(v / GiB, 2) for k, v in {**c.memory, "total": c.memory_bytes}.items()}}


def _layout(batch: int, mesh: dict[str, int], rules: dict[str, object]):
    """A given layout costed as plan costs its candidates."""
    from meshify.plan import cost_layout, parse_memory

    return cost_layout(FILE.read_bytes(), str(FILE), "lm_loss", {**DIMS, "batch": batch}, mesh, rules,
                       memory=parse_memory(MEMORY))


def _plan(devices: int, batch: int):
    from meshify.plan import parse_memory, plan_source

    start = time.perf_counter()
    search, = plan_source(FILE.read_bytes(), str(FILE), devices, {**DIMS, "batch": batch}, "lm_loss",
                          memory=parse_memory(MEMORY))
    return search, time.perf_counter() - start


def _micro_batches() -> list[int]:
    """Divisors of the global batch, largest first."""
    return [b for b in range(DIMS["batch"], 0, -1) if DIMS["batch"] % b == 0]


def _one(devices: int) -> dict:
    whole, seconds = _plan(devices, DIMS["batch"])
    out = {"devices": devices, "global_batch": {
        "fitting_layouts": len(whole.candidates), "rejected_for_memory": len(whole.rejected),
        "smallest_rejected": _row(whole.rejected[0]) if whole.rejected else None,
        "search_seconds": round(seconds, 2)}}
    for micro in _micro_batches():
        search, seconds = _plan(devices, micro)
        if search.best is not None:
            break
    out["micro_batch"] = {
        "sequences": micro, "accumulation_steps": DIMS["batch"] // micro, "search": search.search,
        "structures_rewritten": search.structures, "candidates_costed": search.costed,
        "fitting_layouts": len(search.candidates), "search_seconds": round(seconds, 2),
        "pick": _row(search.best), "runners_up": [_row(c) for c in search.candidates[1:5]]}
    out["pure_data_parallel_one_sequence_per_device"] = _row(_layout(devices, {"data": devices}, {"batch": "data"}))
    data = devices // 8
    out["megatron_tensor_parallel_8"] = {
        "at_the_pick_micro_batch": _row(_layout(micro, {"data": data, "model": 8}, MEGATRON))
        if micro % data == 0 else f"micro-batch {micro} does not divide over data={data}",
        "one_sequence_per_data_rank": _row(_layout(data, {"data": data, "model": 8}, MEGATRON))}
    return out


def _print(r: dict) -> None:
    g, m = r["global_batch"], r["micro_batch"]
    print(f"{r['devices']} devices, {MEMORY}: all {DIMS['batch']} sequences in one call: {g['fitting_layouts']} "
          f"layouts fit, {g['rejected_for_memory']} rejected")
    pick = m["pick"]
    print(f"  micro-batch {m['sequences']} ({m['accumulation_steps']} per step): {m['fitting_layouts']} of "
          f"{m['candidates_costed']} fit; pick {pick['decorator']}: {pick['time_s']} s, {pick['dominant']}, "
          f"{pick['memory_gib']['total']} GiB")
    shown = {"pure data parallelism, 1 sequence per device": r["pure_data_parallel_one_sequence_per_device"],
             **{f"Megatron TP 8, {k.replace('_', ' ')}": v for k, v in r["megatron_tensor_parallel_8"].items()}}
    for label, c in shown.items():
        print(f"  {label}: " + (f"{c['decorator']}: {c['time_s']} s, {c['memory_gib']['total']} GiB, fits={c['fits']}"
                                if isinstance(c, dict) else c))


def main() -> int:
    rows = []
    for devices in DEVICES:
        rows.append(_one(devices))
        _print(rows[-1])
    result = {"function": "examples/transformer_lm.py::lm_loss", "dims": DIMS, "machine_preset": "h100",
              "memory_per_device": MEMORY, "optimizer": "adam", "itemsize": 4, "rows": rows,
              "command": "python benchmarks/plan_gpt3.py"}
    out = ROOT / "benchmarks" / "results" / "plan_gpt3.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
