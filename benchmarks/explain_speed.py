"""How long ``meshify explain`` takes on a 500-line module of 50 annotated functions.

    python benchmarks/explain_speed.py            # prints and writes benchmarks/results/explain_speed.json

Measures the whole command (``python -m meshify explain FILE --format json``, a fresh
process: imports included) and ``explain_source`` alone in this process, median of 5.
"""

from __future__ import annotations

import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DIMS = "batch=16,length=128,d_model=512,d_ff=2048,heads=8,d_head=64,vocab=32768"

FUNCTION = '''

@mesh(batch=2, model=4, rules={{"d_ff": "model", "heads": "model", "vocab": "model"}})
def block_{i}(x: Tensor["batch", "length", "d_model"], w1: Tensor["d_model", "d_ff"],
              w2: Tensor["d_ff", "d_model"], wq: Tensor["d_model", "heads", "d_head"],
              emb: Tensor["vocab", "d_model"]) -> Tensor["batch", "length", "vocab"]:
    h = jax.nn.gelu(jnp.einsum("bld,df->blf", x, w1))
    x = x + jnp.einsum("blf,fd->bld", h, w2)
    q = jnp.einsum("bld,dhk->blhk", x, wq)
    s = jax.nn.softmax(jnp.einsum("bqhk,bshk->bhqs", q, q), axis=-1)
    logits = jnp.einsum("bld,vd->blv", x + s.sum() * 0.0, emb)
    return jax.nn.log_softmax(logits, axis=-1)
'''


def make_module(functions: int = 50) -> str:
    header = "import jax\nimport jax.numpy as jnp\nfrom meshify import Tensor, mesh\n"
    return header + "".join(FUNCTION.format(i=i) for i in range(functions))


def main() -> int:
    from meshify.explain import explain_source, parse_dims

    text = make_module()
    lines = text.count("\n")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "model.py"
        path.write_text(text)
        command = [sys.executable, "-m", "meshify", "explain", str(path), "--format", "json", "--dims", DIMS]
        cli = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
            cli.append(time.perf_counter() - start)
    sizes = parse_dims(DIMS)
    inproc = []
    for _ in range(5):
        start = time.perf_counter()
        reports = explain_source(text, "model.py", sizes)
        inproc.append(time.perf_counter() - start)
    result = {
        "lines": lines, "functions": len(reports),
        "cli_seconds_median": round(statistics.median(cli), 3),
        "explain_source_seconds_median": round(statistics.median(inproc), 3),
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}",
        "command": "python benchmarks/explain_speed.py",
    }
    print(json.dumps(result, indent=2))
    out = ROOT / "benchmarks" / "results" / "explain_speed.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
