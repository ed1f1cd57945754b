#!/usr/bin/env python3
"""Write the tiny LiteRT (``.tflite``) models and their NumPy reference used by the LiteRT.js tests.

Each model is one FULLY_CONNECTED operator, ``Y = X @ W.T + B`` (TFLite stores
the weight as ``[out, in]``), float32, written with the generated TFLite schema
builders (PyPI ``tflite``) and ``flatbuffers`` — no converter, no download.
Weights and inputs come from closed-form formulas, so the bytes are the same on
every machine (``tests/py/test_test_models.py`` regenerates and compares).

Outputs (small enough to commit), in ``tests/data/``:

``litert_fc.tflite``
    ``X`` ``[4, 8]`` → ``Y`` ``[4, 8]``: the first step of the LiteRT.js →
    ONNX Runtime Web → TF.js → Python chain (``mlp.onnx`` takes ``Y`` as its ``X``).
``litert_fc16_16.tflite`` and ``litert_fc16_262144.tflite``
    The same kind of layer with 16 features over ``[16, 16]`` (1 KiB) and
    ``[262144, 16]`` (16 MiB) float32: the LiteRT.js → ORT hand-off benchmark.
    (With 8 features, 16 MiB needs 524288 rows, and LiteRT's WebGPU kernel then
    dispatches 65536 workgroups in Y, one more than WebGPU allows: the run gives
    zeros with only a console warning.)
``litert_chain_reference.json``
    ``input`` (``[4, 8]``), ``litert`` (this layer), ``ort`` (``mlp.onnx`` on
    that: ``Relu(litert @ W + B)``) and ``tfjs_sigmoid`` (``sigmoid(ort)``),
    nested lists.

Run from the repository root::

    .venv/bin/python scripts/make_tflite_model.py
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

import flatbuffers
import numpy as np
import tflite  # noqa: F401  (the package; its modules below are the generated schema)

# The package's __init__ re-exports each table's class under the module's name, so the
# modules (with the builder functions) are taken from sys.modules.
_schema = {
    name: importlib.import_module(f"tflite.{name}")
    for name in (
        "ActivationFunctionType",
        "Buffer",
        "BuiltinOperator",
        "BuiltinOptions",
        "FullyConnectedOptions",
        "Model",
        "Operator",
        "OperatorCode",
        "SignatureDef",
        "SubGraph",
        "Tensor",
        "TensorMap",
        "TensorType",
    )
}
ActivationFunctionType, Buffer, BuiltinOperator, BuiltinOptions = (
    _schema[n] for n in ("ActivationFunctionType", "Buffer", "BuiltinOperator", "BuiltinOptions")
)
FullyConnectedOptions, Model, Operator, OperatorCode = (
    _schema[n] for n in ("FullyConnectedOptions", "Model", "Operator", "OperatorCode")
)
SignatureDef, SubGraph, Tensor, TensorMap, TensorType = (
    _schema[n] for n in ("SignatureDef", "SubGraph", "Tensor", "TensorMap", "TensorType")
)

sys.path.insert(0, str(Path(__file__).resolve().parent))
from exact_values import exact_pattern  # noqa: E402
from make_test_model import fixed_input, fixed_weights  # noqa: E402  (the ONNX MLP the chain feeds)

FEATURES = 8
CHAIN_ROWS = 4
BENCH_FEATURES = 16
BENCH_ROWS = (16, 262144)  # x 16 features x 4 B: 1 KiB and 16 MiB
SCHEMA_VERSION = 3
SIGNATURE_KEY = "serving_default"


def fc_weights(features: int = FEATURES) -> tuple[np.ndarray, np.ndarray]:
    """Return the layer's weight ``[out, in] = [features, features]`` and bias ``[features]`` as float32.

    Parameters
    ----------
    features : int
        Input and output features (8 for the chain model).

    Returns
    -------
    tuple of numpy.ndarray
        ``(weight, bias)``; weight in [-0.5, 0.5] with mixed signs, bias in [-0.125, 0.125]; exact
        (exact_values.py), so the layer's output is exact too.
    """
    weight = exact_pattern((features, features), (4, 9), 2, 0.5)
    bias = exact_pattern((features,), (3,), 5, 0.125)
    return weight, bias


def fc_reference(x: np.ndarray) -> np.ndarray:
    """Compute the layer on ``x`` the way TFLite defines FULLY_CONNECTED.

    Parameters
    ----------
    x : numpy.ndarray
        float32 ``[rows, features]``.

    Returns
    -------
    numpy.ndarray
        float32 ``[rows, features]``: ``x @ weight.T + bias``.
    """
    weight, bias = fc_weights(x.shape[1])
    return (x.astype(np.float32) @ weight.T + bias).astype(np.float32)


def _int_vector(builder: flatbuffers.Builder, start, values: list[int]) -> int:
    """Write an int32 vector with the schema's ``Start...Vector`` function; return its offset."""
    start(builder, len(values))
    for v in reversed(values):
        builder.PrependInt32(v)
    return builder.EndVector()


def _tensor(builder: flatbuffers.Builder, name: str, shape: list[int], buffer: int) -> int:
    """Write one float32 ``Tensor`` table; return its offset."""
    name_off = builder.CreateString(name)
    shape_off = _int_vector(builder, Tensor.TensorStartShapeVector, shape)
    Tensor.TensorStart(builder)
    Tensor.TensorAddShape(builder, shape_off)
    Tensor.TensorAddType(builder, TensorType.TensorType.FLOAT32)
    Tensor.TensorAddBuffer(builder, buffer)
    Tensor.TensorAddName(builder, name_off)
    return Tensor.TensorEnd(builder)


def _buffer(builder: flatbuffers.Builder, data: bytes | None) -> int:
    """Write one ``Buffer`` table (``None``: the empty buffer non-constant tensors point to)."""
    data_off = None if data is None else builder.CreateByteVector(data)  # 4-byte aligned bytes
    Buffer.BufferStart(builder)
    if data_off is not None:
        Buffer.BufferAddData(builder, data_off)
    return Buffer.BufferEnd(builder)


def _tensor_map(builder: flatbuffers.Builder, name: str, index: int) -> int:
    """Write one signature ``TensorMap`` entry; return its offset."""
    name_off = builder.CreateString(name)
    TensorMap.TensorMapStart(builder)
    TensorMap.TensorMapAddName(builder, name_off)
    TensorMap.TensorMapAddTensorIndex(builder, index)
    return TensorMap.TensorMapEnd(builder)


def _table_vector(builder: flatbuffers.Builder, start, offsets: list[int]) -> int:
    """Write a vector of table offsets with the schema's ``Start...Vector`` function."""
    start(builder, len(offsets))
    for off in reversed(offsets):
        builder.PrependUOffsetTRelative(off)
    return builder.EndVector()


def build_fc_model(rows: int, features: int = FEATURES) -> bytes:
    """Build the FULLY_CONNECTED model over ``[rows, features]`` as ``.tflite`` bytes.

    Parameters
    ----------
    rows : int
        Rows of the input ``x`` and output ``y`` (static in the model).
    features : int
        Features in and out.

    Returns
    -------
    bytes
        A TFLite flatbuffer (file identifier ``TFL3``): tensors ``x`` (input),
        ``weight``, ``bias`` (constants), ``y`` (output); signature ``serving_default``.
    """
    weight, bias = fc_weights(features)
    b = flatbuffers.Builder(1024)
    # Buffer 0 is the empty sentinel; 1 and 2 hold the constants.
    buffers = [_buffer(b, None), _buffer(b, weight.tobytes()), _buffer(b, bias.tobytes())]
    tensors = [
        _tensor(b, "x", [rows, features], 0),
        _tensor(b, "weight", [features, features], 1),
        _tensor(b, "bias", [features], 2),
        _tensor(b, "y", [rows, features], 0),
    ]
    FullyConnectedOptions.FullyConnectedOptionsStart(b)
    FullyConnectedOptions.FullyConnectedOptionsAddFusedActivationFunction(
        b, ActivationFunctionType.ActivationFunctionType.NONE
    )
    options = FullyConnectedOptions.FullyConnectedOptionsEnd(b)
    op_inputs = _int_vector(b, Operator.OperatorStartInputsVector, [0, 1, 2])
    op_outputs = _int_vector(b, Operator.OperatorStartOutputsVector, [3])
    Operator.OperatorStart(b)
    Operator.OperatorAddOpcodeIndex(b, 0)
    Operator.OperatorAddInputs(b, op_inputs)
    Operator.OperatorAddOutputs(b, op_outputs)
    Operator.OperatorAddBuiltinOptionsType(b, BuiltinOptions.BuiltinOptions.FullyConnectedOptions)
    Operator.OperatorAddBuiltinOptions(b, options)
    operator = Operator.OperatorEnd(b)

    tensors_off = _table_vector(b, SubGraph.SubGraphStartTensorsVector, tensors)
    inputs_off = _int_vector(b, SubGraph.SubGraphStartInputsVector, [0])
    outputs_off = _int_vector(b, SubGraph.SubGraphStartOutputsVector, [3])
    operators_off = _table_vector(b, SubGraph.SubGraphStartOperatorsVector, [operator])
    graph_name = b.CreateString("main")
    SubGraph.SubGraphStart(b)
    SubGraph.SubGraphAddTensors(b, tensors_off)
    SubGraph.SubGraphAddInputs(b, inputs_off)
    SubGraph.SubGraphAddOutputs(b, outputs_off)
    SubGraph.SubGraphAddOperators(b, operators_off)
    SubGraph.SubGraphAddName(b, graph_name)
    subgraph = SubGraph.SubGraphEnd(b)

    OperatorCode.OperatorCodeStart(b)
    OperatorCode.OperatorCodeAddDeprecatedBuiltinCode(b, BuiltinOperator.BuiltinOperator.FULLY_CONNECTED)
    OperatorCode.OperatorCodeAddBuiltinCode(b, BuiltinOperator.BuiltinOperator.FULLY_CONNECTED)
    OperatorCode.OperatorCodeAddVersion(b, 1)
    opcode = OperatorCode.OperatorCodeEnd(b)

    sig_inputs = _table_vector(b, SignatureDef.SignatureDefStartInputsVector, [_tensor_map(b, "x", 0)])
    sig_outputs = _table_vector(b, SignatureDef.SignatureDefStartOutputsVector, [_tensor_map(b, "y", 3)])
    sig_key = b.CreateString(SIGNATURE_KEY)
    SignatureDef.SignatureDefStart(b)
    SignatureDef.SignatureDefAddInputs(b, sig_inputs)
    SignatureDef.SignatureDefAddOutputs(b, sig_outputs)
    SignatureDef.SignatureDefAddSignatureKey(b, sig_key)
    SignatureDef.SignatureDefAddSubgraphIndex(b, 0)
    signature = SignatureDef.SignatureDefEnd(b)

    opcodes_off = _table_vector(b, Model.ModelStartOperatorCodesVector, [opcode])
    subgraphs_off = _table_vector(b, Model.ModelStartSubgraphsVector, [subgraph])
    buffers_off = _table_vector(b, Model.ModelStartBuffersVector, buffers)
    signatures_off = _table_vector(b, Model.ModelStartSignatureDefsVector, [signature])
    description = b.CreateString("webdlpack scripts/make_tflite_model.py: y = x @ weight.T + bias")
    Model.ModelStart(b)
    Model.ModelAddVersion(b, SCHEMA_VERSION)
    Model.ModelAddOperatorCodes(b, opcodes_off)
    Model.ModelAddSubgraphs(b, subgraphs_off)
    Model.ModelAddDescription(b, description)
    Model.ModelAddBuffers(b, buffers_off)
    Model.ModelAddSignatureDefs(b, signatures_off)
    b.Finish(Model.ModelEnd(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def evaluate_tflite(data: bytes, x: np.ndarray) -> np.ndarray:
    """Evaluate a model written by :func:`build_fc_model` by reading it back through the schema.

    The reader checks what the builder wrote (identifier, operator, tensor
    shapes, constant bytes) and computes FULLY_CONNECTED from the stored constants.

    Parameters
    ----------
    data : bytes
        The ``.tflite`` bytes.
    x : numpy.ndarray
        float32 input of the model's input shape.

    Returns
    -------
    numpy.ndarray
        The output ``y``.
    """
    if not Model.Model.ModelBufferHasIdentifier(data, 0):
        raise ValueError("not a TFLite flatbuffer (file identifier TFL3 missing)")
    model = Model.Model.GetRootAs(data, 0)
    graph = model.Subgraphs(0)
    op = graph.Operators(0)
    if model.OperatorCodes(op.OpcodeIndex()).BuiltinCode() != BuiltinOperator.BuiltinOperator.FULLY_CONNECTED:
        raise ValueError("expected one FULLY_CONNECTED operator")

    def const(tensor_index: int) -> np.ndarray:
        t = graph.Tensors(tensor_index)
        raw = model.Buffers(t.Buffer()).DataAsNumpy()
        return np.frombuffer(raw.tobytes(), dtype=np.float32).reshape(t.ShapeAsNumpy())

    x_shape = tuple(graph.Tensors(graph.Inputs(0)).ShapeAsNumpy())
    if x.shape != x_shape:
        raise ValueError(f"input shape {x.shape} != model input {x_shape}")
    weight, bias = const(op.Inputs(1)), const(op.Inputs(2))
    return (x.astype(np.float32) @ weight.T + bias).astype(np.float32)


def chain_reference() -> dict[str, object]:
    """Compute what each step of the LiteRT.js → ORT → TF.js chain must give.

    Returns
    -------
    dict
        JSON-ready: ``shape``, ``input``, ``litert``, ``ort``, ``tfjs_sigmoid`` (nested lists).
    """
    x = fixed_input()
    y1 = fc_reference(x)
    w, b = fixed_weights()
    y2 = np.maximum(y1 @ w + b, np.float32(0)).astype(np.float32)
    y3 = (1.0 / (1.0 + np.exp(-y2.astype(np.float64)))).astype(np.float32)
    return {
        "description": "litert = input @ W_fc.T + b_fc (litert_fc.tflite); ort = Relu(litert @ W + B) (mlp.onnx); "
        "tfjs_sigmoid = sigmoid(ort). float32, row-major.",
        "shape": [CHAIN_ROWS, FEATURES],
        "input": x.tolist(),
        "litert": y1.tolist(),
        "ort": y2.tolist(),
        "tfjs_sigmoid": y3.tolist(),
    }


def write_all(out: Path) -> list[Path]:
    """Write every model and the reference into ``out``; return the paths written.

    Parameters
    ----------
    out : pathlib.Path
        Folder (made if missing).
    """
    out.mkdir(parents=True, exist_ok=True)
    written = []
    models = [(CHAIN_ROWS, FEATURES, "litert_fc.tflite")]
    models += [(r, BENCH_FEATURES, f"litert_fc{BENCH_FEATURES}_{r}.tflite") for r in BENCH_ROWS]
    for rows, features, name in models:
        data = build_fc_model(rows, features)
        probe = np.ones((rows, features), dtype=np.float32)
        if not np.array_equal(evaluate_tflite(data, probe), fc_reference(probe)):
            raise AssertionError(f"{name}: the written model does not read back as the layer")
        (out / name).write_bytes(data)
        written.append(out / name)
    ref = out / "litert_chain_reference.json"
    ref.write_text(json.dumps(chain_reference(), indent=1) + "\n")
    written.append(ref)
    return written


def main() -> None:
    """Write the LiteRT test models and the chain reference."""
    root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=root / "tests" / "data")
    args = parser.parse_args()
    for path in write_all(args.out):
        print(f"wrote {path} ({path.stat().st_size} B)")


if __name__ == "__main__":
    main()
