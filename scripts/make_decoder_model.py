#!/usr/bin/env python3
"""Write a tiny Transformers.js decoder (causal LM with a KV cache) model folder and its NumPy reference.

It exists to show what Transformers.js does to ``preferredOutputLocation`` for
models with a cache: the folder looks like a one-layer, one-head GPT-2
(``model_type: "gpt2"``, ``n_layer`` 1, ``n_head`` 1, ``n_embd`` 8) to
Transformers.js, which then feeds ``past_key_values.0.key/value`` and reads
``logits`` and ``present.0.key/value``. The graph (``E`` = the embedding of
``make_transformers_model.py``, ``W`` a fixed ``[8, 16]`` matrix)::

    k = embedding[input_ids][:, None]          # [batch, 1, sequence, 8]
    present.0.key   = concat(past_key_values.0.key, k, axis=2)
    present.0.value = concat(past_key_values.0.value, tanh(k), axis=2)
    logits = (embedding[input_ids] + mean(present.0.value, axis=2)) @ W

Outputs, in ``tests/data/transformers/tiny-gpt2/`` (committed; the test
``tests/py/test_test_models.py`` regenerates and compares): ``config.json``,
``generation_config.json``, ``tokenizer.json``, ``tokenizer_config.json``,
``onnx/model.onnx`` and ``reference.json`` (``text``, ``ids``, the ``logits``
of one forward pass with an empty cache, and the ``embedding`` to check cache
contents with).

Run from the repository root::

    .venv/bin/python scripts/make_decoder_model.py
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
from exact_values import exact_pattern  # noqa: E402
from make_transformers_model import IR_VERSION, OPSET, VOCAB, parameters, tokenize, tokenizer_json  # noqa: E402

HIDDEN = 8
TEXT = "the cat sat"


def output_weight() -> np.ndarray:
    """The fixed ``[8, vocab]`` float32 matrix from hidden state to logits."""
    return exact_pattern((HIDDEN, len(VOCAB)), (4, 5), 6, 0.5)


def build_graph() -> onnx.ModelProto:
    """The decoder graph (see the module docstring); inputs and outputs named as Transformers.js expects for GPT-2."""
    embedding = parameters(HIDDEN)[0]
    kv = ["batch", 1, "past", HIDDEN]
    present = ["batch", 1, "total", HIDDEN]
    nodes = [
        helper.make_node("Gather", ["embedding", "input_ids"], ["embedded"], axis=0),
        helper.make_node("Unsqueeze", ["embedded", "axis1"], ["key_new"]),
        helper.make_node("Tanh", ["key_new"], ["value_new"]),
        helper.make_node("Concat", ["past_key_values.0.key", "key_new"], ["present.0.key"], axis=2),
        helper.make_node("Concat", ["past_key_values.0.value", "value_new"], ["present.0.value"], axis=2),
        helper.make_node("ReduceMean", ["present.0.value"], ["context_4d"], axes=[2], keepdims=1),
        helper.make_node("Squeeze", ["context_4d", "axis1"], ["context"]),
        helper.make_node("Add", ["embedded", "context"], ["hidden"]),
        helper.make_node("MatMul", ["hidden", "w_out"], ["logits"]),
    ]
    graph = helper.make_graph(
        nodes,
        "webdlpack_tiny_gpt2",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "total"]),
            helper.make_tensor_value_info("past_key_values.0.key", TensorProto.FLOAT, kv),
            helper.make_tensor_value_info("past_key_values.0.value", TensorProto.FLOAT, kv),
        ],
        outputs=[
            helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "sequence", len(VOCAB)]),
            helper.make_tensor_value_info("present.0.key", TensorProto.FLOAT, present),
            helper.make_tensor_value_info("present.0.value", TensorProto.FLOAT, present),
        ],
        initializer=[
            numpy_helper.from_array(embedding, "embedding"),
            numpy_helper.from_array(output_weight(), "w_out"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        ],
    )
    model = helper.make_model(
        graph, producer_name="webdlpack-make_decoder_model", opset_imports=[helper.make_opsetid("", OPSET)]
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


def forward_logits(ids: list[int]) -> np.ndarray:
    """The logits ``[1, len(ids), vocab]`` of one forward pass with an empty cache, in NumPy."""
    embedded = parameters(HIDDEN)[0][np.asarray(ids)]
    context = np.tanh(embedded).mean(axis=0)
    return ((embedded + context) @ output_weight()).astype(np.float32)[None]


def write_folder(folder: Path) -> list[Path]:
    """Write the model folder and ``reference.json``; return the files written."""
    (folder / "onnx").mkdir(parents=True, exist_ok=True)
    config = {
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "n_layer": 1,
        "n_head": 1,
        "n_embd": HIDDEN,
        "vocab_size": len(VOCAB),
        "n_positions": 64,
        "bos_token_id": VOCAB["[UNK]"],
        "eos_token_id": VOCAB["[UNK]"],
        "pad_token_id": VOCAB["[PAD]"],
        "transformers.js_config": {"dtype": "fp32"},
    }
    ids = tokenize(TEXT)
    reference = {
        "description": (
            "logits of one forward pass with an empty cache; "
            "embedding: row i is the key Transformers.js caches for token i"
        ),
        "text": TEXT,
        "ids": ids,
        "logits": forward_logits(ids).tolist(),
        "embedding": parameters(HIDDEN)[0].tolist(),
    }
    files = {
        folder / "config.json": config,
        folder / "generation_config.json": {
            "bos_token_id": config["bos_token_id"],
            "eos_token_id": config["eos_token_id"],
            "pad_token_id": config["pad_token_id"],
        },
        folder / "tokenizer.json": tokenizer_json(),
        folder / "tokenizer_config.json": {
            "tokenizer_class": "PreTrainedTokenizer",
            "model_max_length": 64,
            "pad_token": "[PAD]",
            "unk_token": "[UNK]",
        },
        folder / "reference.json": reference,
    }
    for path, value in files.items():
        path.write_text(json.dumps(value, indent=1) + "\n")
    onnx.save(build_graph(), folder / "onnx" / "model.onnx")
    return [*files, folder / "onnx" / "model.onnx"]


def main() -> None:
    """Write ``tests/data/transformers/tiny-gpt2/`` (or ``--out``/tiny-gpt2)."""
    root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=root / "tests" / "data" / "transformers")
    args = parser.parse_args()
    for path in write_folder(args.out / "tiny-gpt2"):
        print(f"wrote {path} ({path.stat().st_size} B)")


if __name__ == "__main__":
    main()
