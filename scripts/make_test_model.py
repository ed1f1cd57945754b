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
``web/model/demo_mlp.onnx`` and ``web/model/demo_reference.json``
    The demo page's model: the same dense layer at ``[16, 16]``, and what the
    page must end with: ``input`` (``x0[i] = ((7 i) mod 17 - 8) / 8``, made in
    Python), ``shader`` (``2 x0 + 1``, the page's WebGPU step), ``output``
    (the model on that) and ``tfjs_sigmoid`` (the TF.js step).

Run from the repository root::

    .venv/bin/python scripts/make_test_model.py
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import onnx
from exact_values import exact_pattern  # scripts/ is on sys.path when a script runs
from onnx import TensorProto, helper, numpy_helper

ROWS, FEATURES = 4, 8
DEMO_SIZE = 16
OPSET = 17
IR_VERSION = 8


def fixed_weights() -> tuple[np.ndarray, np.ndarray]:
    """Return the layer's weight ``[8, 8]`` and bias ``[8]`` as float32.

    Returns
    -------
    tuple of numpy.ndarray
        ``(weight, bias)``; values in [-0.5, 0.5], mixed signs so Relu clips some; exact (exact_values.py).
    """
    weight = exact_pattern((FEATURES, FEATURES), (5, 3), 1, 0.5)
    bias = exact_pattern((FEATURES,), (6,), 4, 0.25)
    return weight, bias


def fixed_input() -> np.ndarray:
    """Return the test input ``X`` (float32 ``[4, 8]``), values in [-1, 1], exact (exact_values.py)."""
    return exact_pattern((ROWS, FEATURES), (7, 2), 3, 1.0)


def demo_weights() -> tuple[np.ndarray, np.ndarray]:
    """Return the demo layer's weight ``[16, 16]`` and bias ``[16]`` as float32.

    Returns
    -------
    tuple of numpy.ndarray
        ``(weight, bias)``; weight in [-0.25, 0.25], bias in [-0.5, 0.5].
    """
    weight = exact_pattern((DEMO_SIZE, DEMO_SIZE), (5, 3), 1, 0.25)
    bias = exact_pattern((DEMO_SIZE,), (6,), 4, 0.5)
    return weight, bias


def demo_input() -> np.ndarray:
    """Return the demo input ``x0[i] = ((7 i) mod 17 - 8) / 8`` as float32 ``[16, 16]`` (exact in float32)."""
    i = np.arange(DEMO_SIZE * DEMO_SIZE)
    return (((7 * i) % 17 - 8) / 8).astype(np.float32).reshape(DEMO_SIZE, DEMO_SIZE)


def build_model(weight: np.ndarray, bias: np.ndarray, rows: int = ROWS, name: str = "webdlpack_mlp") -> onnx.ModelProto:
    """Build the MatMul + Add + Relu graph with ``weight`` and ``bias`` baked in.

    Parameters
    ----------
    weight : numpy.ndarray
        float32 ``[F, F]`` matrix, stored as initializer ``W``.
    bias : numpy.ndarray
        float32 ``[F]`` vector, stored as initializer ``B``.
    rows : int
        Rows of the input ``X`` (fixed in the graph).
    name : str
        Graph name.

    Returns
    -------
    onnx.ModelProto
        A checked model with input ``X`` ``[rows, F]`` and output ``Y`` ``[rows, F]``.
    """
    features = weight.shape[1]
    nodes = [
        helper.make_node("MatMul", ["X", "W"], ["XW"], name="matmul"),
        helper.make_node("Add", ["XW", "B"], ["XWB"], name="add"),
        helper.make_node("Relu", ["XWB"], ["Y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes,
        name,
        inputs=[helper.make_tensor_value_info("X", TensorProto.FLOAT, [rows, features])],
        outputs=[helper.make_tensor_value_info("Y", TensorProto.FLOAT, [rows, features])],
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
    model = helper.make_model(
        graph, producer_name="webdlpack-make_test_model", opset_imports=[helper.make_opsetid("", OPSET)]
    )
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


def demo_reference() -> dict[str, list]:
    """Compute what the demo page must show, step by step.

    Returns
    -------
    dict
        JSON-ready: ``shape``, ``input`` (flat), ``shader`` (``2 x0 + 1``),
        ``output`` (the model) and ``tfjs_sigmoid``, all flat float32 lists.
    """
    weight, bias = demo_weights()
    x0 = demo_input()
    shader = (np.float32(2) * x0 + np.float32(1)).astype(np.float32)
    ref = reference(shader, weight, bias)
    flat = {k: np.asarray(ref[k], dtype=np.float32).ravel().tolist() for k in ("output", "tfjs_sigmoid")}
    return {
        "description": "x0 made in Python; shader = 2*x0 + 1 (WebGPU); output = Relu(shader @ W + B) (ORT-web); "
        "tfjs_sigmoid = sigmoid(output) (TF.js). float32, row-major, flat.",
        "shape": [DEMO_SIZE, DEMO_SIZE],
        "input": x0.ravel().tolist(),
        "shader": shader.ravel().tolist(),
        **flat,
    }


def write_demo(out: Path) -> None:
    """Write ``demo_mlp.onnx`` and ``demo_reference.json`` into ``out``.

    Parameters
    ----------
    out : pathlib.Path
        Folder (made if missing); the demo page loads ``web/model/``.
    """
    out.mkdir(parents=True, exist_ok=True)
    weight, bias = demo_weights()
    onnx.save(build_model(weight, bias, rows=DEMO_SIZE, name="webdlpack_demo_mlp"), out / "demo_mlp.onnx")
    (out / "demo_reference.json").write_text(json.dumps(demo_reference(), indent=1) + "\n")


def main_into(out: Path, demo_out: Path) -> None:
    """Write ``mlp.onnx``, ``relu_dynamic.onnx`` and ``mlp_reference.json`` into ``out``, the demo's into ``demo_out``.

    Parameters
    ----------
    out, demo_out : pathlib.Path
        Folders (made if missing).
    """
    out.mkdir(parents=True, exist_ok=True)
    weight, bias = fixed_weights()
    x = fixed_input()
    onnx.save(build_model(weight, bias), out / "mlp.onnx")
    onnx.save(build_relu_model(), out / "relu_dynamic.onnx")
    (out / "mlp_reference.json").write_text(json.dumps(reference(x, weight, bias), indent=1) + "\n")
    write_demo(demo_out)


def main() -> None:
    """Write the test models and references, and the demo page's model and reference."""
    root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=root / "tests" / "data")
    parser.add_argument("--demo-out", type=Path, default=root / "web" / "model")
    args = parser.parse_args()
    main_into(args.out, args.demo_out)
    print(
        f"wrote {args.out} (mlp.onnx, relu_dynamic.onnx, mlp_reference.json) and "
        f"{args.demo_out} (demo_mlp.onnx, demo_reference.json)"
    )


if __name__ == "__main__":
    main()
