"""Weak scaling under FSDP (issue #15): the same GPT-2 on 1, 2, 4 and 8 devices, per-device memory.

``examples/gpt2.py`` with its ``@mesh`` line replaced by pure FSDP,
``@mesh(data=N, rules={"batch": "data", "d_model": "data"})``: activations split on the batch,
every weight on ``d_model`` (gathered right before its use, its gradient reduce-scattered back).
The global batch grows with N (2 sequences per device), so the per-device work stays the same.
For each N it prints and saves (``benchmarks/results/fsdp_scaling.json``):

- ``explain``: the per-device bytes of the arguments (parameters and tokens), from the
  annotations alone (``meshify.explain``);
- ``xla``: ``compiled.memory_analysis()`` of one ``jax.value_and_grad`` step of the loss
  on N simulated CPU devices: argument bytes, temporary bytes, and their sum.

Parameter memory per device should fall as 1/N; temporaries hold per-device activations (the
same for every N under weak scaling) and one gathered layer's weights at a time.

    python benchmarks/fsdp_scaling.py
"""

from __future__ import annotations

import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported

import importlib.util  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

import jax  # noqa: E402

from meshify.explain import explain_source  # noqa: E402

DEVICES = (1, 2, 4, 8)
PER_DEVICE_BATCH = 2
OLD = '@mesh(batch=2, model=4, rules={"heads": "model", "d_ff": "model", "vocab": "model"})'


def _source(n: int) -> str:
    text = (ROOT / "examples" / "gpt2.py").read_text()
    assert OLD in text, "examples/gpt2.py's @mesh line changed: update benchmarks/fsdp_scaling.py"
    text = text.replace(OLD, f'@mesh(data={n}, rules={{"batch": "data", "d_model": "data"}})')
    return text.replace("simulate_cpu_devices(8)", "pass")


def _module(n: int, text: str):
    path = Path("/tmp") / f"meshify_fsdp_scaling_{n}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"meshify_fsdp_scaling_{n}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def measure(n: int) -> dict:
    text = _source(n)
    m = _module(n, text)
    sizes = dict(m.SIZES, batch=PER_DEVICE_BATCH * n, qkv=3)
    m.SIZES["batch"] = sizes["batch"]  # batches() reads it
    [report] = explain_source(text, "gpt2_fsdp.py", sizes, "gpt2")
    params = m.init_params()
    tokens, targets = next(m.batches(1))
    key, cfg = jax.random.key(0), m.DEFAULT_CONFIG
    placed = m.gpt2.place(params, tokens, targets, key, cfg, False)

    def loss(p, tokens, targets, key):
        return m.gpt2(p, tokens, targets, key, cfg, False)[0]

    compiled = jax.jit(jax.value_and_grad(loss)).lower(*placed[:4]).compile()
    memory = compiled.memory_analysis()
    parameter_bytes = sum(x.addressable_shards[0].data.nbytes for x in jax.tree.leaves(placed[0]))
    return {"devices": n, "global_batch": sizes["batch"],
            "explain_argument_bytes": report.parameter_bytes, "parameter_bytes_per_device": parameter_bytes,
            "xla_argument_bytes": memory.argument_size_in_bytes, "xla_temp_bytes": memory.temp_size_in_bytes,
            "xla_argument_plus_temp": memory.argument_size_in_bytes + memory.temp_size_in_bytes}


def main() -> int:
    rows = [measure(n) for n in DEVICES]
    header = ("devices", "global batch", "params/device", "explain args", "XLA args", "XLA temp", "XLA args+temp")
    print(" | ".join(header))
    for r in rows:
        print(" | ".join(str(v) for v in (r["devices"], r["global_batch"], r["parameter_bytes_per_device"],
                                           r["explain_argument_bytes"], r["xla_argument_bytes"], r["xla_temp_bytes"],
                                           r["xla_argument_plus_temp"])))
    out = ROOT / "benchmarks" / "results" / "fsdp_scaling.json"
    out.write_text(json.dumps({"command": "python benchmarks/fsdp_scaling.py", "jax": jax.__version__,
                               "platform": jax.devices()[0].platform, "rows": rows}, indent=2) + "\n")
    print(f"saved {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
