"""Under ``meshify launch -n 2``: the converted 2x4 hybrid block, its inputs placed three ways.

    meshify launch -n 2 tests/multiprocess/hybrid.py CONVERTED_FILE OUT_DIR

Each process writes OUT_DIR/process_<i>.npz with every result brought back by ``to_host``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import jax
import numpy as np

import meshify.runtime as mr

ARGS = ("x", "w1", "b1", "w2")


def inputs() -> tuple[np.ndarray, ...]:
    """The same arrays on every process (a fixed seed), sized like examples/hybrid.py."""
    batch, length, d_model, d_ff = 4, 8, 16, 64
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, length, d_model), dtype=np.float32)
    w1 = rng.standard_normal((d_model, d_ff), dtype=np.float32) / np.sqrt(d_model)
    b1 = rng.standard_normal((d_ff,), dtype=np.float32)
    w2 = rng.standard_normal((d_ff, d_model), dtype=np.float32) / np.sqrt(d_ff)
    return x, w1, b1, w2


def load(path: str):
    spec = importlib.util.spec_from_file_location("hybrid_sharded", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def pair_sum() -> mr.Sharded:
    """A 2-device mesh on a job of 8 devices: one device from each process."""
    return mr.bind(lambda v: jax.lax.psum(v, "batch"), mr.MeshSpec.of(batch=2),
                   {"v": mr.ArgSpec(("batch",), mr.P("batch"))}, mr.P())


def run(ffn_block: mr.Sharded) -> dict[str, np.ndarray]:
    """Every result, whole, as numpy."""
    arrays = inputs()
    shardings = ffn_block.shardings
    blocks = [mr.process_local(a[mr.process_slice(a.shape, shardings[name])]) for name, a in zip(ARGS, arrays)]
    pair = pair_sum()
    return {
        "full": mr.to_host(ffn_block(*arrays)),            # the same full arrays on every process
        "local": mr.to_host(ffn_block(*blocks)),           # each process's own blocks
        "jitted": mr.to_host(jax.jit(ffn_block)(*ffn_block.place(*arrays))),
        "pair": mr.to_host(pair(np.array([1.0, 2.0], np.float32))),
        "pair_processes": np.array(sorted({d.process_index for d in pair.mesh.devices.flat})),
    }


def main(converted: str, out_dir: str) -> int:
    ffn_block = load(converted).ffn_block
    results = run(ffn_block)
    x_block = ffn_block.shardings["x"]
    results["x_rows"] = np.array(mr.process_slice((4, 8, 16), x_block)[0].indices(4)[:2])
    results["spans_processes"] = np.array(not ffn_block(*inputs()).is_fully_addressable)
    results["topology"] = np.array([jax.process_index(), jax.process_count(), len(jax.devices())])
    np.savez(Path(out_dir) / f"process_{jax.process_index()}.npz", **results)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
