#!/usr/bin/env python3
"""Compile the TVM in-place test model for WebGPU into its own .wasm (run by scripts/tvm/build.sh).

Runs in the apache-tvm venv that build.sh makes. Apart from ``make_models.py``'s models, so adding or changing it
rebuilds only this .wasm. One Relax function:

``add_one_inplace(x)``
    ``x += 1`` over a float32 vector of any length, written into ``x`` itself with ``R.call_tir_inplace`` (as an
    LLM's KV-cache update is): its output is its input's buffer. The kernel is hand-scheduled TIR (64 threads
    per workgroup, one element each), marked scheduled so the default GPU pipeline keeps it as it is.

Writes ``<out>/inplace_model.wasm``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import tvm
from make_models import link_with_runtime
from tvm import relax, tirx
from tvm.script import tirx as T


@T.prim_func(private=True)
def add_one(a: T.handle) -> None:
    """``A[i] += 1`` for every ``i`` of a float32 vector ``A``, in place."""
    T.func_attr({"tirx.noalias": True, "tirx.is_scheduled": True})
    n = T.int64()
    A = T.match_buffer(a, (n,), "float32")
    for bx in T.thread_binding((n + T.int64(63)) // T.int64(64), thread="blockIdx.x"):
        for tx in T.thread_binding(T.int64(64), thread="threadIdx.x"):
            if bx * T.int64(64) + tx < n:
                A[bx * T.int64(64) + tx] = A[bx * T.int64(64) + tx] + T.float32(1)


def build_module() -> tvm.IRModule:
    """Return the Relax module with ``add_one_inplace`` (``x`` float32 ``[n]``).

    Returns
    -------
    tvm.IRModule
        The module, before any lowering.
    """
    bb = relax.BlockBuilder()
    n = tirx.Var("n", "int64")
    x = relax.Var("x", relax.TensorType((n,), "float32"))
    with bb.function("add_one_inplace", [x]):
        kernel = bb.add_func(add_one, "add_one")
        with bb.dataflow():
            out = relax.call_tir_inplace(kernel, (x,), inplace_indices=[0], out_ty=relax.TensorType((n,), "float32"))
            y = bb.emit_output(out)
        bb.emit_func_output(y)
    return bb.get()


def main() -> None:
    """Compile the module and write the .wasm."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", type=Path, required=True, help="folder with tvmjs's runtime .bc files")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    args = parser.parse_args()
    target = tvm.target.Target("webgpu", host={"kind": "llvm", "mtriple": "wasm32-unknown-unknown-wasm"})
    executable = relax.build(build_module(), target)
    executable.export_library(str(args.out / "inplace_model.wasm"), fcompile=link_with_runtime(args.runtime))


if __name__ == "__main__":
    main()
