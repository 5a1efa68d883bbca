"""``meshify.memory``'s per-device memory prediction against XLA's, for every benchmark's training step.

For each case of ``benchmarks/run.py`` (its fwd_bwd program: ``jax.value_and_grad`` of the case's
loss; for ``lm_step`` one optax adamw step) and for ``benchmarks/fsdp_scaling.py``'s GPT-2 under
FSDP on 1, 2, 4 and 8 devices (``jax.value_and_grad`` of its loss), on 8 simulated CPU devices:

- ``predicted``: ``meshify.memory.predict_step`` of the same loss, arguments and optimizer
  (``adam`` for ``lm_step``, ``none`` elsewhere): arguments + temporaries per device, from the
  traced program (nothing compiled);
- ``measured``: ``compiled.memory_analysis()`` of the compiled step: ``argument_size_in_bytes +
  temp_size_in_bytes``;

and their ratio, which should lie within 10% of 1.  Then, for every case but ``lm_step``, one optax adam step
(``optax.adam``) over the case's parameters as ``explain --optimizer adam`` picks them (the float
arguments with no batch dim; the data is an input), predicted and measured the same way.  Printed and saved to
``benchmarks/results/memory_predict.json`` (``--quick``: ``memory_predict_quick.json``).

    python benchmarks/memory_predict.py            # run.py's full sizes, a few minutes
    python benchmarks/memory_predict.py --quick    # run.py's quick sizes
"""

from __future__ import annotations

import os
import sys

os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("JAX_PLATFORMS", "cpu")  # before jax is imported

import argparse  # noqa: E402
import inspect  # noqa: E402
import json  # noqa: E402
from collections.abc import Callable, Sequence  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "examples")]

import jax  # noqa: E402

from benchmarks import cases, fsdp_scaling, run  # noqa: E402
from meshify.memory import loss_of, predict_step  # noqa: E402

TOLERANCE = 0.10


def _row(case: str, report, compiled) -> dict:
    memory = compiled.memory_analysis()
    measured = int(memory.argument_size_in_bytes + memory.temp_size_in_bytes)
    return {"case": case, "optimizer": report.optimizer, "predicted": report.peak, "measured": measured,
            "ratio": round(report.peak / measured, 4),
            "predicted_parts": report.to_json(),
            "measured_parts": {"argument": int(memory.argument_size_in_bytes), "temp": int(memory.temp_size_in_bytes),
                               "output": int(memory.output_size_in_bytes)}}


def _compiled(program: Callable, args: Sequence) -> object:
    return jax.jit(program).lower(*args).compile()


def case_row(name: str, size: dict) -> dict:
    """A run.py case: its fwd_bwd program compiled, and the prediction for the same step."""
    bench = run.make_bench(name, "fwd_bwd", size)
    if name == "lm_step":  # one optax adamw step of lm_loss: (params, opt_state, tokens, targets)
        import transformer_lm as lm

        params, _state, tokens, targets = bench.args
        report = predict_step(lambda p, t, y: lm.lm_loss(t, y, **p), (params, tokens, targets), (0,), "adam")
    else:
        argnums = tuple(i for i, a in enumerate(bench.host_args) if a.dtype.kind == "f")
        report = predict_step(loss_of(getattr(cases, name)), bench.args, argnums, "none")
    return _row(name, report, _compiled(bench.variants["meshify"], bench.args))


def _parameters(name: str) -> tuple[int, ...]:
    """The case's parameters, as ``explain --optimizer`` picks them: float arguments with no batch dim."""
    hints = inspect.signature(getattr(cases, name).reference).parameters.values()
    return tuple(i for i, p in enumerate(hints) if "batch" not in str(p.annotation) and p.name not in ("tokens", "targets"))


def adam_row(name: str, size: dict) -> dict:
    """A run.py case trained by one optax adam step of its loss over its parameters (its data is an input)."""
    import optax

    fn = getattr(cases, name)
    args = run.make_bench(name, "fwd", size).args
    argnums = _parameters(name)
    optimizer = optax.adam(1e-3)
    loss = loss_of(fn)

    def step(params, state, *rest):
        def of(p):
            p, r = iter(p), iter(rest)
            return loss(*(next(p) if i in argnums else next(r) for i in range(len(args))))

        value, grads = jax.value_and_grad(of)(params)
        updates, state = optimizer.update(grads, state, params)
        return value, optax.apply_updates(params, updates), state

    params = tuple(args[i] for i in argnums)
    rest = tuple(a for i, a in enumerate(args) if i not in argnums)
    report = predict_step(loss, args, argnums, "adam")
    return _row(name, report, _compiled(step, (params, optimizer.init(params), *rest)))


def gpt2_row(devices: int) -> dict:
    """fsdp_scaling's GPT-2 under FSDP on ``devices`` devices: one jax.value_and_grad step of its loss."""
    text = fsdp_scaling._source(devices)
    m = fsdp_scaling._module(devices, text)
    m.SIZES["batch"] = fsdp_scaling.PER_DEVICE_BATCH * devices
    tokens, targets = next(m.batches(1))
    key, cfg = jax.random.key(0), m.DEFAULT_CONFIG
    args = m.gpt2.place(m.init_params(), tokens, targets, key, cfg, False)[:4]

    def loss(p, tokens, targets, key):
        return m.gpt2(p, tokens, targets, key, cfg, False)[0]

    report = predict_step(loss, args, (0,), "none")
    return _row(f"gpt2_fsdp_{devices}", report, _compiled(jax.value_and_grad(loss), args))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="run.py's quick sizes")
    args = parser.parse_args(argv)
    sizes = run.SIZES["quick" if args.quick else "full"]
    rows = [case_row(name, sizes[name]) for name in run.CASES]
    rows += [adam_row(name, sizes[name]) for name in run.CASES if name != "lm_step"]
    rows += [gpt2_row(n) for n in fsdp_scaling.DEVICES]
    print(f"{'case':<14} {'optimizer':<9} {'predicted':>12} {'measured':>12} {'ratio':>6}")
    for r in rows:
        mark = "" if abs(r["ratio"] - 1) <= TOLERANCE else "   <-- outside 10%"
        print(f"{r['case']:<14} {r['optimizer']:<9} {r['predicted']:>12,} {r['measured']:>12,} {r['ratio']:>6.3f}{mark}")
    command = "python benchmarks/memory_predict.py" + (" --quick" if args.quick else "")
    out = ROOT / "benchmarks" / "results" / ("memory_predict_quick.json" if args.quick else "memory_predict.json")
    out.write_text(json.dumps({"command": command, "jax": jax.__version__, "platform": jax.devices()[0].platform,
                               "tolerance": TOLERANCE, "rows": rows}, indent=1) + "\n")
    print(f"saved {out.relative_to(ROOT)}")
    return 0 if all(abs(r["ratio"] - 1) <= TOLERANCE for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
