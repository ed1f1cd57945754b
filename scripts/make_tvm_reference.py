#!/usr/bin/env python3
"""Write the NumPy reference of the TVM (tvmjs) browser tests: ``tests/data/tvm_chain_reference.json``.

The models are compiled by ``scripts/tvm/build.sh`` (``scripts/tvm/make_models.py``, in TVM's own venv);
this file holds what they and the chains built on them must give, computed here with NumPy from the same
closed-form weights and input as ``tests/data/mlp.onnx`` and ``tests/data/litert_fc.tflite``:

``input``
    ``X`` float32 ``[4, 8]`` (``make_test_model.fixed_input``).
``mlp``
    The tvmjs model ``mlp``: ``relu(X @ W + B)`` with the weights of ``mlp.onnx``.
``two_outputs``
    The tvmjs model ``two_outputs``: ``[mlp, X.sum(axis=1)]``.
``chain_ort`` / ``chain_sigmoid``
    tvmjs ``mlp`` → ONNX Runtime ``mlp.onnx`` → TF.js ``sigmoid``.
``chain_litert``
    tvmjs ``mlp`` → LiteRT.js ``litert_fc.tflite`` (``y @ W_fc.T + b_fc``).

Run from the repository root::

    .venv/bin/python scripts/make_tvm_reference.py
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from make_test_model import fixed_input, fixed_weights
from make_tflite_model import fc_reference


def tvm_reference() -> dict[str, object]:
    """Return every step's expected values (nested lists, float32 rounded)."""
    x = fixed_input()
    w, b = fixed_weights()
    y1 = np.maximum(x @ w + b, np.float32(0)).astype(np.float32)
    y2 = np.maximum(y1 @ w + b, np.float32(0)).astype(np.float32)
    return {
        "description": "mlp = relu(input @ W + B) (tvmjs; W, B of mlp.onnx); two_outputs = [mlp, input.sum(1)]; "
        "chain_ort = relu(mlp @ W + B) (ORT mlp.onnx); chain_sigmoid = sigmoid(chain_ort) (TF.js); "
        "chain_litert = mlp @ W_fc.T + b_fc (LiteRT litert_fc.tflite). float32, row-major.",
        "input": x.tolist(),
        "mlp": y1.tolist(),
        "two_outputs": [y1.tolist(), x.sum(axis=1, dtype=np.float32).tolist()],
        "chain_ort": y2.tolist(),
        "chain_sigmoid": (1.0 / (1.0 + np.exp(-y2.astype(np.float64)))).astype(np.float32).tolist(),
        "chain_litert": fc_reference(y1).tolist(),
    }


def main() -> None:
    """Write the reference file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("tests/data/tvm_chain_reference.json"))
    args = parser.parse_args()
    args.out.write_text(json.dumps(tvm_reference(), indent=1) + "\n")


if __name__ == "__main__":
    main()
