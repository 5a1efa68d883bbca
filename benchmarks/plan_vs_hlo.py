"""``meshify plan``'s predicted collective bytes against the compiled HLO's, for every candidate.

    python benchmarks/plan_vs_hlo.py            # every candidate of every case: minutes on 2 cores
    python benchmarks/plan_vs_hlo.py --every 4  # every 4th candidate

For each ``@mesh`` function of ``benchmarks/cases.py``, plan on 8 devices (memory unbounded, so that
every layout is a candidate); each candidate's ``@mesh`` line is written into a copy of the file,
imported (the decorator rewrites it) and compiled on 8 simulated CPU devices, twice: the forward
pass, and the forward and backward pass (a vjp with respect to every float argument, as for a layer
inside a model, its cotangent placed like the output).  Collective bytes per device come from
``meshify.runtime.hlo``.  Prints the agreement per case and writes
``benchmarks/results/plan_vs_hlo.json``.  ``tests/test_plan.py`` runs the same comparisons.
"""

from __future__ import annotations

import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported

import argparse
import json
import re
import secrets
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES_FILE = ROOT / "benchmarks" / "cases.py"
#: One size per dim name, for every case (benchmarks/run.py's quick sizes; a batch of 8 so that
#: every data-parallel factorisation of 8 devices divides it; one layer, as the compiled HLO holds a scan body once).
SIZES = {"batch": 8, "length": 16, "d_model": 64, "d_ff": 256, "heads": 8, "d_head": 8, "vocab": 1024,
         "d_in": 64, "d_hidden": 256, "d_out": 64, "layers": 1}


def case_names() -> list[str]:
    """The ``@mesh`` functions of benchmarks/cases.py, in file order."""
    from meshify.explain import chosen_functions
    from meshify.rewrite._context import parse_context

    ctx = parse_context(CASES_FILE.read_bytes(), str(CASES_FILE))
    return [fn.name.value for fn, _ in chosen_functions(ctx, str(CASES_FILE), None)]


def candidates(case: str) -> list:
    """Every layout plan costs for ``case`` on 8 devices, best first."""
    from meshify.plan import plan_source

    search, = plan_source(CASES_FILE.read_bytes(), str(CASES_FILE), 8, SIZES, case, memory=1 << 50)
    return search.candidates


def _loaded(folder: Path, case: str, candidate):
    """``candidate``'s ``@mesh`` line written into a copy of benchmarks/cases.py and imported: the
    rewritten program and random arguments by name."""
    from meshify.plan import apply_mesh
    from meshify.verify import _build, _draw, _import, _predict

    text = apply_mesh(CASES_FILE.read_bytes(), str(CASES_FILE), {case: candidate})
    copy = folder / f"cases_{secrets.token_hex(4)}.py"
    copy.write_bytes(text)
    (report, hints), = _predict(text, copy, SIZES, case, {})
    module = _import(copy, copy.stem)
    leaves = _draw(report, hints, 0, SIZES)
    return getattr(module, case), {name: _build(module, name, struct, leaves, SIZES)
                                   for name, struct in report.structure.items()}


def _hlo_bytes(text: str) -> int:
    from meshify.runtime.hlo import collectives

    return sum(c.bytes for c in collectives(text))


_GROUPS = re.compile(r"replica_groups=(?:\{\{(?P<first>[0-9,]*)\}|\[[0-9]+,(?P<size>[0-9]+)\]<="
                     r"|mesh\[(?P<mesh>[^\]]*)\]\s*\{(?P<over>[^}]*)\})")
_AXIS = re.compile(r"'(?P<name>[^']+)'\s*=\s*(?P<size>[0-9]+)")


def group_size(match: re.Match) -> int:
    """The devices in one group of a ``_GROUPS`` match: the explicit first group's, the iota
    form's ``[groups,size]``, or (jax 0.11's XLA) the product of the named axes of
    ``mesh['data'=2,'model'=4] {'model'}``."""
    if match["mesh"] is not None:
        sizes = {m["name"]: int(m["size"]) for m in _AXIS.finditer(match["mesh"])}
        size = 1
        for name in re.findall(r"'([^']+)'", match["over"]):
            size *= sizes[name]
        return size
    return int(match["size"]) if match["size"] else len(match["first"].split(","))


def hlo_collectives(text: str) -> list[tuple[str, int, int]]:
    """Each collective of compiled HLO text as (kind, bytes per device, devices in its group): the
    group read from ``replica_groups`` (see :func:`group_size`)."""
    from meshify.runtime.hlo import collectives

    out = []
    lines = [line for line in text.splitlines() if any(f" {k}(" in line or f" {k}-start(" in line
                                                        for k in ("all-reduce", "all-gather", "reduce-scatter",
                                                                  "all-to-all", "collective-permute"))]
    found = collectives(text)
    assert len(lines) == len(found), "one collective per instruction line"
    for line, c in zip(lines, found):
        match = _GROUPS.search(line)
        if match is None:
            raise ValueError(f"no replica groups in {line.strip()[:200]}")
        out.append((c.kind, c.bytes, group_size(match)))
    return out


def compiled_forward(folder: Path, case: str, candidate) -> int:
    """Collective bytes per device in the compiled forward pass of ``candidate``."""
    program, arrays = _loaded(folder, case, candidate)
    return _hlo_bytes(program.lower(**arrays).compile().as_text())


def compiled_forward_backward_text(folder: Path, case: str, candidate) -> str:
    """The compiled HLO text of ``candidate``'s forward and backward pass: a vjp with respect to every
    float argument, its cotangent placed like the output."""
    import jax
    import numpy as np

    program, arrays = _loaded(folder, case, candidate)
    floats = [name for name, a in arrays.items() if np.asarray(a).dtype.kind == "f"]
    fixed = {name: a for name, a in arrays.items() if name not in floats}

    def forward_backward(values, cotangent):
        out, pullback = jax.vjp(lambda *v: program(**dict(zip(floats, v)), **fixed), *values)
        return out, pullback(cotangent)

    out = program(**arrays)
    cotangent = jax.device_put(np.ones(out.shape, out.dtype), out.sharding)
    return jax.jit(forward_backward).lower([arrays[n] for n in floats], cotangent).compile().as_text()


def compiled_forward_backward(folder: Path, case: str, candidate) -> int:
    """The same for the forward and backward pass."""
    return _hlo_bytes(compiled_forward_backward_text(folder, case, candidate))


def _compare(folder: Path, case: str, every: int) -> dict:
    rows = []
    for c in candidates(case)[::every]:
        forward, backward = sum(c.forward_bytes.values()), sum(c.backward_bytes.values())
        rows.append({"decorator": c.decorator, "predicted_forward": forward,
                     "compiled_forward": compiled_forward(folder, case, c),
                     "predicted_forward_backward": forward + backward,
                     "compiled_forward_backward": compiled_forward_backward(folder, case, c)})
    same = {k: sum(r[f"predicted_{k}"] == r[f"compiled_{k}"] for r in rows) for k in ("forward", "forward_backward")}
    print(f"{case}: {len(rows)} candidates; predicted = compiled: forward {same['forward']}, "
          f"forward+backward {same['forward_backward']}", flush=True)
    return {"case": case, "candidates": len(rows), "forward_equal": same["forward"],
            "forward_backward_equal": same["forward_backward"], "rows": rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="compare every Nth candidate")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        cases = [_compare(Path(folder), case, args.every) for case in case_names()]
    result = {"sizes": SIZES, "devices": 8, "every": args.every, "cases": cases,
              "command": "python benchmarks/plan_vs_hlo.py" + (f" --every {args.every}" if args.every > 1 else "")}
    out = ROOT / "benchmarks" / "results" / "plan_vs_hlo.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
