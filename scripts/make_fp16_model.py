#!/usr/bin/env python3
"""Write the float16 ONNX test models: float16 in, float16 out (docs/float16.md).

``tests/data/half_moves.onnx``: ``Y = Identity(X)`` and ``Z = Reshape(X, [2, -1])``, ``X`` float16 ``[N]``
(``N`` even, dynamic). Neither op computes: ORT's WebGPU EP runs them without a shader, so they run on a
device without the ``shader-f16`` feature (SwiftShader) and move float16 tensors in and out of ORT for real.
``tests/data/half_affine.onnx``: ``Y = Relu(X) * 0.5 + 0.25`` in float16 and ``Z = Cast(Y, float32)``: float16
arithmetic, which ORT's WebGPU EP runs only where the device has ``shader-f16`` (elsewhere its run fails with
"Program Relu requires f16 but the device does not support it"). Every test value is exact in float16. The
files are the same on every machine.

Run from the repository root::

    .venv/bin/python scripts/make_fp16_model.py
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"


def finish(graph: onnx.GraphProto) -> onnx.ModelProto:
    """``graph`` as an opset-17 model, checked by onnx.checker."""
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="webdlpack")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def moves() -> onnx.ModelProto:
    """``half_moves.onnx``: float16 through Identity and Reshape (no arithmetic)."""
    shape = numpy_helper.from_array(np.array([2, -1], dtype=np.int64), "shape")
    graph = helper.make_graph(
        [helper.make_node("Identity", ["X"], ["Y"]), helper.make_node("Reshape", ["X", "shape"], ["Z"])],
        "half_moves",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT16, ["N"])],
        [
            helper.make_tensor_value_info("Y", TensorProto.FLOAT16, ["N"]),
            helper.make_tensor_value_info("Z", TensorProto.FLOAT16, [2, "M"]),
        ],
        initializer=[shape],
    )
    return finish(graph)


def affine() -> onnx.ModelProto:
    """``half_affine.onnx``: float16 arithmetic and a Cast to float32."""
    half = numpy_helper.from_array(np.array(0.5, dtype=np.float16), "half")
    quarter = numpy_helper.from_array(np.array(0.25, dtype=np.float16), "quarter")
    nodes = [
        helper.make_node("Relu", ["X"], ["r"]),
        helper.make_node("Mul", ["r", "half"], ["m"]),
        helper.make_node("Add", ["m", "quarter"], ["Y"]),
        helper.make_node("Cast", ["Y"], ["Z"], to=TensorProto.FLOAT),
    ]
    graph = helper.make_graph(
        nodes,
        "half_affine",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT16, ["N"])],
        [
            helper.make_tensor_value_info("Y", TensorProto.FLOAT16, ["N"]),
            helper.make_tensor_value_info("Z", TensorProto.FLOAT, ["N"]),
        ],
        initializer=[half, quarter],
    )
    return finish(graph)


if __name__ == "__main__":
    for name, model in (("half_moves.onnx", moves()), ("half_affine.onnx", affine())):
        (DATA / name).write_bytes(model.SerializeToString())
        print(f"wrote tests/data/{name} ({(DATA / name).stat().st_size} bytes)")
