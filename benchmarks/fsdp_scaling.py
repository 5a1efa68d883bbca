"""Weak scaling under FSDP (issue #15): the same GPT-2 on 1, 2, 4 and 8 devices, per-device memory.

``examples/gpt2.py`` with its ``@mesh`` line replaced by pure FSDP,
``@mesh(data=N, rules={"batch": "data", "d_model": "data"})``: activations split on the batch,
every weight on ``d_model`` (gathered right before its use, its gradient reduce-scattered back).
The global batch grows with N (2 sequences per device), so the per-device work stays the same.
For each N, one training step: ``jax.value_and_grad`` of the loss, then an optax adam update
(``optax.adam``; new parameters and state returned).  It prints and saves
(``benchmarks/results/fsdp_scaling.json``):

- ``explain``: ``meshify explain --optimizer adam``'s prediction of that step
  (``meshify.memory.predict_file``, the function traced, nothing compiled): parameters,
  gradients, adam's two moments, activations saved for the backward pass, and arguments +
  temporaries (``peak``);
- ``xla``: ``compiled.memory_analysis()`` of the same step compiled on N simulated CPU devices:
  argument bytes, temporary bytes, and their sum;

and their ratio (explain / XLA).  Parameters, gradients and optimizer state per device fall as
1/N; activations stay the same under weak scaling, and one gathered layer's weights at a time.

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
    import optax

    from meshify.memory import predict_file

    text = _source(n)
    m = _module(n, text)
    sizes = dict(m.SIZES, batch=PER_DEVICE_BATCH * n, qkv=3)
    m.SIZES["batch"] = sizes["batch"]  # batches() reads it
    path = Path(m.__file__)
    [report] = explain_source(text, str(path), sizes, "gpt2")
    [predicted] = predict_file(path, [report], "adam")
    params = m.init_params()
    tokens, targets = next(m.batches(1))
    key, cfg = jax.random.key(0), m.DEFAULT_CONFIG
    placed = m.gpt2.place(params, tokens, targets, key, cfg, False)
    optimizer = optax.adam(1e-3)

    def step(p, state, tokens, targets, key):
        loss, grads = jax.value_and_grad(lambda p: m.gpt2(p, tokens, targets, key, cfg, False)[0])(p)
        updates, state = optimizer.update(grads, state, p)
        return loss, optax.apply_updates(p, updates), state

    args = (placed[0], optimizer.init(placed[0]), *placed[1:4])
    memory = jax.jit(step).lower(*args).compile().memory_analysis()
    xla = int(memory.argument_size_in_bytes + memory.temp_size_in_bytes)
    parameter_bytes = sum(x.addressable_shards[0].data.nbytes for x in jax.tree.leaves(placed[0]))
    return {"devices": n, "global_batch": sizes["batch"], "parameter_bytes_per_device": parameter_bytes,
            "explain": predicted.to_json(), "explain_argument_bytes": report.parameter_bytes,
            "xla_argument_bytes": int(memory.argument_size_in_bytes), "xla_temp_bytes": int(memory.temp_size_in_bytes),
            "xla_output_bytes": int(memory.output_size_in_bytes), "xla_argument_plus_temp": xla,
            "ratio": round(predicted.peak / xla, 4)}


def main() -> int:
    assert len(jax.devices()) >= max(DEVICES)  # JAX started with 8 devices (predict_file then simulates no fewer)
    rows = [measure(n) for n in DEVICES]
    header = ("devices", "global batch", "parameters", "gradients", "adam state", "activations", "explain args+temp",
              "XLA args", "XLA temp", "XLA args+temp", "explain/XLA")
    print(" | ".join(header))
    for r in rows:
        e = r["explain"]
        print(" | ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in (
            r["devices"], r["global_batch"], e["parameters"], e["gradients"], e["optimizer_state"], e["activations"],
            e["peak"], r["xla_argument_bytes"], r["xla_temp_bytes"], r["xla_argument_plus_temp"], r["ratio"])))
    out = ROOT / "benchmarks" / "results" / "fsdp_scaling.json"
    out.write_text(json.dumps({"command": "python benchmarks/fsdp_scaling.py", "jax": jax.__version__,
                               "platform": jax.devices()[0].platform, "optimizer": "adam", "rows": rows},
                              indent=2) + "\n")
    print(f"saved {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
