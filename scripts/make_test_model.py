#!/usr/bin/env python3
"""Write the tiny ONNX model and its NumPy reference used by the adapter tests.

The model is one dense layer, ``Y = Relu(X @ W + B)`` with ``X`` float32
``[4, 8]``, ``W`` float32 ``[8, 8]`` and ``B`` float32 ``[8]``. Weights and the
test input come from closed-form formulas (no random generator), so the files
are the same on every machine and NumPy version.

Outputs (both small enough to commit):

``tests/data/mlp.onnx``
    The model; ``W`` and ``B`` are initializers, ``X`` is the only input and
    ``Y`` the only output.
``tests/data/relu_dynamic.onnx``
    ``Y = Relu(X)`` over a float32 vector of dynamic length ``N`` (used to move
    large tensors, e.g. 16 MiB, in the hand-off measurement).
``tests/data/mlp_reference.json``
    ``input``, ``weight``, ``bias`` (nested lists), ``output`` (the NumPy
    result of the model for ``input``) and ``tfjs_sigmoid`` (``sigmoid(output)``,
    the TF.js op the browser test applies after ORT).

Run from the repository root::

    .venv/bin/python scripts/make_test_model.py
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROWS, FEATURES = 4, 8
OPSET = 17
IR_VERSION = 8


def fixed_weights() -> tuple[np.ndarray, np.ndarray]:
    """Return the layer's weight ``[8, 8]`` and bias ``[8]`` as float32.

    Returns
    -------
    tuple of numpy.ndarray
        ``(weight, bias)``; values in [-0.5, 0.5], mixed signs so Relu clips some.
    """
    i, j = np.meshgrid(np.arange(FEATURES), np.arange(FEATURES), indexing="ij")
    weight = (0.5 * np.sin(0.7 * i + 1.3 * j + 0.1)).astype(np.float32)
    bias = (0.25 * np.cos(np.arange(FEATURES) * 0.9)).astype(np.float32)
    return weight, bias


def fixed_input() -> np.ndarray:
    """Return the test input ``X`` (float32 ``[4, 8]``), values in [-1, 1]."""
    r, c = np.meshgrid(np.arange(ROWS), np.arange(FEATURES), indexing="ij")
    return np.cos(0.37 * r * FEATURES + 0.53 * c + 0.2).astype(np.float32)


def build_model(weight: np.ndarray, bias: np.ndarray) -> onnx.ModelProto:
    """Build the MatMul + Add + Relu graph with ``weight`` and ``bias`` baked in.

    Parameters
    ----------
    weight : numpy.ndarray
        float32 ``[8, 8]`` matrix, stored as initializer ``W``.
    bias : numpy.ndarray
        float32 ``[8]`` vector, stored as initializer ``B``.

    Returns
    -------
    onnx.ModelProto
        A checked model with input ``X`` ``[4, 8]`` and output ``Y`` ``[4, 8]``.
    """
    nodes = [
        helper.make_node("MatMul", ["X", "W"], ["XW"], name="matmul"),
        helper.make_node("Add", ["XW", "B"], ["XWB"], name="add"),
        helper.make_node("Relu", ["XWB"], ["Y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes,
        "webdlpack_mlp",
        inputs=[helper.make_tensor_value_info("X", TensorProto.FLOAT, [ROWS, FEATURES])],
        outputs=[helper.make_tensor_value_info("Y", TensorProto.FLOAT, [ROWS, FEATURES])],
        initializer=[numpy_helper.from_array(weight, "W"), numpy_helper.from_array(bias, "B")],
    )
    model = helper.make_model(
        graph,
        producer_name="webdlpack-make_test_model",
        opset_imports=[helper.make_opsetid("", OPSET)],
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


def build_relu_model() -> onnx.ModelProto:
    """Build ``Y = Relu(X)`` with ``X`` float32 ``[N]``, ``N`` dynamic.

    Returns
    -------
    onnx.ModelProto
        A checked one-node model.
    """
    graph = helper.make_graph(
        [helper.make_node("Relu", ["X"], ["Y"], name="relu")],
        "webdlpack_relu_dynamic",
        inputs=[helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N"])],
        outputs=[helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N"])],
    )
    model = helper.make_model(graph, producer_name="webdlpack-make_test_model", opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


def reference(x: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> dict[str, list]:
    """Compute the NumPy reference for the model and the TF.js op after it.

    Parameters
    ----------
    x, weight, bias : numpy.ndarray
        float32 input, weight and bias.

    Returns
    -------
    dict
        JSON-ready nested lists: ``input``, ``weight``, ``bias``, ``output``,
        ``tfjs_sigmoid``, and ``shape`` of the output.
    """
    y = np.maximum(x @ weight + bias, np.float32(0)).astype(np.float32)
    sig = (1.0 / (1.0 + np.exp(-y.astype(np.float64)))).astype(np.float32)
    return {
        "description": "Y = Relu(X @ W + B); tfjs_sigmoid = sigmoid(Y). float32, row-major.",
        "shape": list(y.shape),
        "input": x.tolist(),
        "weight": weight.tolist(),
        "bias": bias.tolist(),
        "output": y.tolist(),
        "tfjs_sigmoid": sig.tolist(),
    }


def main() -> None:
    """Write ``mlp.onnx``, ``relu_dynamic.onnx`` and ``mlp_reference.json`` into the output folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "tests" / "data")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    weight, bias = fixed_weights()
    x = fixed_input()
    onnx.save(build_model(weight, bias), args.out / "mlp.onnx")
    onnx.save(build_relu_model(), args.out / "relu_dynamic.onnx")
    (args.out / "mlp_reference.json").write_text(json.dumps(reference(x, weight, bias), indent=1) + "\n")
    print(f"wrote {args.out / 'mlp.onnx'} and {args.out / 'mlp_reference.json'}")


if __name__ == "__main__":
    main()
