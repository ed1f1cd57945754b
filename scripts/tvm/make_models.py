#!/usr/bin/env python3
"""Compile the TVM test models for WebGPU into one .wasm tvmjs loads (run by scripts/tvm/build.sh).

Runs in the apache-tvm venv that build.sh makes (not the dev venv). One Relax module, two functions,
compiled for ``webgpu`` with a wasm32 host and linked with tvmjs's runtime bitcode into one ``.wasm``
that ``tvmjs.instantiate`` loads:

``mlp(x)``
    The dense layer of ``tests/data/mlp.onnx``: ``relu(x @ W + B)``, ``x`` float32 ``[4, 8]``, with the
    weight and bias of ``tests/data/mlp_reference.json`` baked in as constants.
``two_outputs(x)``
    Two outputs of different shapes from one call: ``(relu(x @ W + B), sum(x, axis=1))``, float32
    ``[4, 8]`` and ``[4]``.
``relu(x)``
    ``relu(x)`` over a float32 vector of any length (the hand-off benchmark moves 1 KiB and 16 MiB).

Writes ``<out>/test_models.wasm``. What the models must give is ``tests/data/tvm_chain_reference.json``
(``scripts/make_tvm_reference.py``, NumPy in the dev venv).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import numpy as np
import tvm
from tvm import relax, tirx

RUNTIME_UNITS = ("wasm_runtime.o", "tvmjs_support.o", "webgpu_runtime.o")


def build_module(weight: np.ndarray, bias: np.ndarray) -> tvm.IRModule:
    """Return the Relax module with ``mlp``, ``two_outputs`` (``x`` float32 ``[4, F]``) and ``relu`` (any length).

    Parameters
    ----------
    weight : numpy.ndarray
        float32 ``[F, F]``, baked in as a constant.
    bias : numpy.ndarray
        float32 ``[F]``, baked in as a constant.

    Returns
    -------
    tvm.IRModule
        The module, before any lowering.
    """
    rows, features = 4, weight.shape[0]
    bb = relax.BlockBuilder()
    w, b = relax.const(weight), relax.const(bias)

    def dense_relu(x: relax.Var) -> relax.Var:
        return bb.emit(relax.op.nn.relu(relax.op.add(relax.op.matmul(x, w), b)))

    x = relax.Var("x", relax.TensorType((rows, features), "float32"))
    with bb.function("mlp", [x]):
        with bb.dataflow():
            y = bb.emit_output(dense_relu(x))
        bb.emit_func_output(y)
    x2 = relax.Var("x", relax.TensorType((rows, features), "float32"))
    with bb.function("two_outputs", [x2]):
        with bb.dataflow():
            y1 = dense_relu(x2)
            y2 = bb.emit(relax.op.sum(x2, axis=[1]))
            out = bb.emit_output(relax.Tuple([y1, y2]))
        bb.emit_func_output(out)
    n = tirx.Var("n", "int64")
    v = relax.Var("x", relax.TensorType((n,), "float32"))
    with bb.function("relu", [v]):
        with bb.dataflow():
            r = bb.emit_output(relax.op.nn.relu(v))
        bb.emit_func_output(r)
    return bb.get()


def link_with_runtime(runtime: Path):
    """Return an ``export_library`` fcompile that links TVM's wasm objects with tvmjs's runtime objects.

    TVM's own ``create_tvmjs_wasm`` hands emcc LLVM bitcode, which Debian's emcc 3.1.6 (LLVM 14) cannot
    read from TVM's LLVM 22 ("Opaque pointers are only supported in -opaque-pointers mode"); with
    ``object_format = "o"`` TVM writes wasm object files instead, which link.

    The link is ``-O1``: the runtime objects were compiled at ``-O3`` (build.sh), and what ``-O2``/``-O3`` add at
    link time is binaryen's whole-module pass over the output, which took 49 s / 126 s a model file on a 2-core
    machine for a file 43 % smaller (3.4 MiB instead of 6.1 MiB); ``-O1`` links in about a second.
    """

    def fcompile(output: str, objects: list[str], options: list[str] | None = None) -> None:
        cmd = [
            "emcc",
            "-O1",
            "-std=c++17",
            "--no-entry",
            "-sWASM_BIGINT=1",
            "-sERROR_ON_UNDEFINED_SYMBOLS=0",
            "-sSTANDALONE_WASM=1",
            "-sALLOW_MEMORY_GROWTH=1",
            "-o",
            output,
        ]
        cmd += [str(runtime / unit) for unit in RUNTIME_UNITS] + list(objects) + list(options or [])
        subprocess.run(cmd, check=True)

    fcompile.object_format = "o"  # type: ignore[attr-defined]
    return fcompile


def main() -> None:
    """Compile the module and write the .wasm."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", type=Path, required=True, help="folder with tvmjs's runtime .bc files")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument("--reference", type=Path, required=True, help="tests/data/mlp_reference.json (weight, bias)")
    args = parser.parse_args()
    ref = json.loads(args.reference.read_text())
    weight = np.asarray(ref["weight"], dtype=np.float32)
    bias = np.asarray(ref["bias"], dtype=np.float32)
    target = tvm.target.Target("webgpu", host={"kind": "llvm", "mtriple": "wasm32-unknown-unknown-wasm"})
    executable = relax.build(build_module(weight, bias), target)
    executable.export_library(str(args.out / "test_models.wasm"), fcompile=link_with_runtime(args.runtime))


if __name__ == "__main__":
    main()
