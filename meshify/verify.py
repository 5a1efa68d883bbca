"""``verify``: run the sharded program against ``.reference`` on random inputs.

Unlike ``convert`` and ``explain``, verify imports and runs the user's file: it needs
the reference function.  It runs the reference on one device and the sharded program
(the decorator's, or a committed generated file's) on the mesh's number of simulated
devices, compares results, and compares the collectives in the compiled HLO with the
ones ``explain`` predicted from the annotations.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from meshify.errors import MeshifyError

__all__ = ["VerifyReport", "verify_file"]


@dataclass(slots=True)
class VerifyReport:
    name: str
    max_abs_error: float
    max_rel_error: float
    results_agree: bool
    predicted: dict[str, tuple[int, int]]
    found: dict[str, tuple[int, int]]
    notes: list[str] = field(default_factory=list)

    @property
    def prediction_matches(self) -> bool:
        """Bytes per collective kind agree (XLA may combine several collectives into one)."""
        kinds = set(self.predicted) | set(self.found)
        return all(self.predicted.get(k, (0, 0))[1] == self.found.get(k, (0, 0))[1] for k in kinds)

    @property
    def ok(self) -> bool:
        return self.results_agree and self.prediction_matches


def _simulate(devices: int) -> None:
    """Asks for ``devices`` simulated CPU devices if JAX has not started yet."""
    if "jax" in sys.modules:
        return
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = f"{flags} --xla_force_host_platform_device_count={devices}".strip()


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise MeshifyError(f"cannot import {path}", code="MSH070",
                           fix="check that the file exists and is a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _run(fn, args, what: str):
    try:
        return fn(*args)
    except MeshifyError:
        raise
    except Exception as e:  # the user's code failed on random inputs: say so, without our frames
        shapes = ", ".join(f"{getattr(a, 'dtype', '?')}{list(getattr(a, 'shape', ()))}" for a in args)
        raise MeshifyError(f"running {what} on random inputs ({shapes}) raised {type(e).__name__}: {e}",
                           code="MSH071", fix="check --dims; integer inputs are those used as indices or "
                           "hinted Int[...]") from None


def _check_statics(reference, prediction) -> None:
    """Static parameters (no Tensor hint) need defaults: verify invents arrays only."""
    import inspect

    from meshify.runtime._source import call_site_span

    params = inspect.signature(reference).parameters
    missing = [name for name, p in params.items()
               if name not in prediction.structure and p.default is inspect.Parameter.empty]
    if missing:
        raise MeshifyError(f"{prediction.name}() has static parameters without defaults ({', '.join(missing)}); "
                           "verify makes random arrays for Tensor-hinted parameters only", code="MSH072",
                           span=call_site_span(reference, missing[0]),
                           fix="give each static parameter a default for verify to use, or verify a @mesh "
                               "function that passes them")


def _build(module, path: str, struct, leaves: dict):
    """The argument at ``path``: a leaf array, or the pytree class built from its fields."""
    if struct is None:
        return leaves[path]
    fields = {name: _build(module, f"{path}.{name}", hint if not isinstance(hint, tuple) else None, leaves)
              for name, hint in struct.fields}
    return fields if struct.kind == "dict" else getattr(module, struct.cls)(**fields)


def verify_file(path: Path, func: str | None, sizes: dict[str, int], generated: Path | None = None,
                seed: int = 0, rtol: float = 1e-4) -> list[VerifyReport]:
    """Verifies each ``@mesh`` function of ``path`` (or ``func``); see the module docstring."""
    from meshify.explain import explain_source

    predictions = explain_source(path.read_bytes(), str(path), sizes, func)
    _simulate(max(r.devices for r in predictions))
    import jax
    import numpy as np

    from meshify.runtime.hlo import collectives, summarize

    source = _import(path, f"_meshify_verify_src_{abs(hash(str(path)))}")
    programs = _import(generated, f"_meshify_verify_gen_{abs(hash(str(generated)))}") if generated else source
    reports = []
    for prediction in predictions:
        reference = getattr(source, prediction.name).reference
        program = getattr(programs, prediction.name, None)
        if program is None:
            raise MeshifyError(f"{generated} defines no {prediction.name!r}", code="MSH070",
                               fix=f"regenerate it: meshify convert {path} -o {generated}")
        _check_statics(reference, prediction)
        rng = np.random.default_rng(seed)
        low = min(min(a.global_shape, default=2) for a in prediction.args) if prediction.args else 2
        leaves = {a.name: jax.random.key(seed + i) if a.key
                  else rng.integers(0, max(1, low), a.global_shape).astype(np.int32) if a.integer
                  else rng.standard_normal(a.global_shape).astype(np.float32)
                  for i, a in enumerate(prediction.args)}
        args = [_build(source, name, struct, leaves) for name, struct in prediction.structure.items()]
        want = jax.tree.leaves(_run(reference, args, f"{prediction.name}.reference"))
        try:
            got = jax.tree.leaves(program(*args))
            hlo = program.lower(*args).compile().as_text()
        except Exception as e:  # a broken sharded program is a failed verification, not bad input
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            reports.append(VerifyReport(prediction.name, float("inf"), float("inf"), False, prediction.predicted(),
                                        {}, [f"the sharded program failed: {type(e).__name__}: {first}"]))
            continue
        abs_err, rel_err = 0.0, 0.0
        for g, w in zip(got, want, strict=True):
            g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
            if g.shape != w.shape:
                abs_err = rel_err = float("inf")
                continue
            diff = float(np.abs(g - w).max()) if g.size else 0.0
            abs_err = max(abs_err, diff)
            rel_err = max(rel_err, diff / max(1e-30, float(np.abs(w).max()) if w.size else 1.0))
        found = summarize(collectives(hlo))
        reports.append(VerifyReport(prediction.name, abs_err, rel_err, rel_err <= rtol, prediction.predicted(),
                                    {k: tuple(v) for k, v in found.items()}))
    return reports
