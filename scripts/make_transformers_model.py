#!/usr/bin/env python3
"""Write a tiny Transformers.js feature-extraction model folder and its NumPy reference.

Transformers.js loads a model by name from a folder (``env.localModelPath``)
holding ``config.json``, ``tokenizer.json``, ``tokenizer_config.json`` and
``onnx/model.onnx``. This script writes such a folder with no hub and no
converter: a BERT-shaped ONNX graph (PyPI ``onnx``) with the input and output
names the ``feature-extraction`` pipeline feeds and reads, and a WordPiece
tokenizer over a 16-word vocabulary. Every number comes from a closed-form
formula, so the bytes are the same on every machine
(``tests/py/test_test_models.py`` regenerates and compares).

The graph (``H`` = hidden size)::

    last_hidden_state = tanh(embedding[input_ids] * scale + shift) * attention_mask[..., None]

with ``input_ids`` and ``attention_mask`` int64 ``[batch, sequence]`` and
``last_hidden_state`` float32 ``[batch, sequence, H]``.

Outputs:

``tests/data/transformers/tiny-bert/`` (``H`` = 8, committed)
    The model the browser tests run, and ``reference.json`` beside it: a
    ``text``, its token ``ids`` and the expected ``last_hidden_state`` (and
    ``tfjs_relu``, the TF.js op the chain test applies next).
``--bench-out DIR`` → ``DIR/tiny-bert-4096/`` (``H`` = 4096)
    The benchmark's model: 1024 tokens give a 16 MiB output. Written by
    ``make bench`` into ``build/models/`` (256 KiB of embedding; not committed).

Run from the repository root::

    .venv/bin/python scripts/make_transformers_model.py [--bench-out build/models [--bench-only]]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import onnx
from exact_values import exact_pattern  # scripts/ is on sys.path when a script runs
from onnx import TensorProto, helper, numpy_helper

OPSET = 17
IR_VERSION = 8
TEST_HIDDEN = 8
BENCH_HIDDEN = 4096
MAX_LENGTH = 4096
SPECIAL = ["[PAD]", "[UNK]"]
WORDS = ["the", "cat", "sat", "on", "mat", "a", "dog", "ran", "web", "gpu", "tensor", "shared", "device", "zero"]
VOCAB = {token: i for i, token in enumerate(SPECIAL + WORDS)}
TEST_TEXT = "the cat sat on a shared gpu tensor zero copy"  # "copy" is not in the vocabulary: [UNK]


def parameters(hidden: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``embedding`` ``[vocab, hidden]``, ``scale`` and ``shift`` ``[hidden]`` as float32.

    Parameters
    ----------
    hidden : int
        Hidden size ``H``.

    Returns
    -------
    tuple of numpy.ndarray
        Embedding values in [-2, 2]; scale in [0.5, 1.5]; shift in [-0.25, 0.25]; all exact (exact_values.py).
    """
    embedding = exact_pattern((len(VOCAB), hidden), (5, 2), 8, 2.0)
    scale = np.float32(1) + exact_pattern((hidden,), (3,), 1, 0.5)
    shift = exact_pattern((hidden,), (7,), 2, 0.25)
    return embedding, scale, shift


def build_graph(hidden: int) -> onnx.ModelProto:
    """Build the feature-extraction graph with hidden size ``hidden``.

    Parameters
    ----------
    hidden : int
        Hidden size ``H``.

    Returns
    -------
    onnx.ModelProto
        A checked model: inputs ``input_ids``, ``attention_mask`` (int64
        ``[batch, sequence]``), output ``last_hidden_state`` (float32 ``[batch, sequence, H]``).
    """
    embedding, scale, shift = parameters(hidden)
    nodes = [
        helper.make_node("Gather", ["embedding", "input_ids"], ["embedded"], axis=0, name="embed"),
        helper.make_node("Mul", ["embedded", "scale"], ["scaled"], name="scale"),
        helper.make_node("Add", ["scaled", "shift"], ["shifted"], name="shift"),
        helper.make_node("Tanh", ["shifted"], ["activated"], name="tanh"),
        helper.make_node("Cast", ["attention_mask"], ["mask_float"], to=TensorProto.FLOAT, name="mask_cast"),
        helper.make_node("Unsqueeze", ["mask_float", "last_axis"], ["mask_3d"], name="mask_unsqueeze"),
        helper.make_node("Mul", ["activated", "mask_3d"], ["last_hidden_state"], name="mask"),
    ]
    dims = ["batch", "sequence"]
    graph = helper.make_graph(
        nodes,
        f"webdlpack_tiny_bert_{hidden}",
        inputs=[
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, dims),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, dims),
        ],
        outputs=[helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, hidden])],
        initializer=[
            numpy_helper.from_array(embedding, "embedding"),
            numpy_helper.from_array(scale, "scale"),
            numpy_helper.from_array(shift, "shift"),
            numpy_helper.from_array(np.array([-1], dtype=np.int64), "last_axis"),
        ],
    )
    model = helper.make_model(
        graph, producer_name="webdlpack-make_transformers_model", opset_imports=[helper.make_opsetid("", OPSET)]
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


def tokenize(text: str) -> list[int]:
    """Token ids of ``text`` as the tokenizer written here gives them (whitespace words, unknown → ``[UNK]``).

    Parameters
    ----------
    text : str
        Words separated by spaces.

    Returns
    -------
    list of int
        One id per word.
    """
    return [VOCAB.get(word, VOCAB["[UNK]"]) for word in text.split()]


def forward(ids: list[int], hidden: int) -> np.ndarray:
    """The graph in NumPy for one unpadded sequence.

    Parameters
    ----------
    ids : list of int
        Token ids.
    hidden : int
        Hidden size.

    Returns
    -------
    numpy.ndarray
        float32 ``[1, len(ids), hidden]``.
    """
    embedding, scale, shift = parameters(hidden)
    x = embedding[np.asarray(ids)] * scale + shift
    return np.tanh(x.astype(np.float32)).astype(np.float32)[None]


def tokenizer_json() -> dict[str, object]:
    """The ``tokenizer.json`` (Hugging Face tokenizers format): WordPiece over whole words."""
    added = [
        {
            "id": VOCAB[t],
            "content": t,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for t in SPECIAL
    ]
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": {"type": "Whitespace"},
        "post_processor": None,
        "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": True},
        "model": {
            "type": "WordPiece",
            "unk_token": "[UNK]",
            "continuing_subword_prefix": "##",
            "max_input_chars_per_word": 100,
            "vocab": VOCAB,
        },
    }


def write_model_folder(folder: Path, hidden: int) -> list[Path]:
    """Write ``config.json``, ``tokenizer.json``, ``tokenizer_config.json`` and ``onnx/model.onnx``.

    Parameters
    ----------
    folder : pathlib.Path
        The model folder (made if missing); its name is the model id.
    hidden : int
        Hidden size.

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    (folder / "onnx").mkdir(parents=True, exist_ok=True)
    config = {
        "model_type": "bert",
        "architectures": ["BertModel"],
        "hidden_size": hidden,
        "vocab_size": len(VOCAB),
        "num_hidden_layers": 1,
        "num_attention_heads": 1,
        "max_position_embeddings": MAX_LENGTH,
        "transformers.js_config": {"dtype": "fp32"},
    }
    tok_config = {
        "tokenizer_class": "BertTokenizer",
        "model_max_length": MAX_LENGTH,
        "pad_token": "[PAD]",
        "unk_token": "[UNK]",
        "do_lower_case": False,
        "clean_up_tokenization_spaces": True,
    }
    files = {
        folder / "config.json": json.dumps(config, indent=1) + "\n",
        folder / "tokenizer.json": json.dumps(tokenizer_json(), indent=1) + "\n",
        folder / "tokenizer_config.json": json.dumps(tok_config, indent=1) + "\n",
    }
    for path, text in files.items():
        path.write_text(text)
    onnx.save(build_graph(hidden), folder / "onnx" / "model.onnx")
    return [*files, folder / "onnx" / "model.onnx"]


def reference() -> dict[str, object]:
    """What the test model must give for :data:`TEST_TEXT`, and the TF.js op after it.

    Returns
    -------
    dict
        JSON-ready: ``text``, ``ids``, ``shape``, ``last_hidden_state`` (nested
        lists) and ``tfjs_relu`` (``relu(last_hidden_state)``).
    """
    ids = tokenize(TEST_TEXT)
    y = forward(ids, TEST_HIDDEN)
    return {
        "description": "last_hidden_state = tanh(embedding[ids] * scale + shift) (no padding: mask all ones); "
        "tfjs_relu = relu(last_hidden_state). float32.",
        "text": TEST_TEXT,
        "ids": ids,
        "shape": list(y.shape),
        "last_hidden_state": y.tolist(),
        "tfjs_relu": np.maximum(y, np.float32(0)).tolist(),
    }


def main() -> None:
    """Write the test model folder and reference, and the benchmark model when asked."""
    root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=root / "tests" / "data" / "transformers")
    parser.add_argument(
        "--bench-out", type=Path, default=None, help="also write tiny-bert-4096/ here (the benchmark's model)"
    )
    parser.add_argument("--bench-only", action="store_true", help="write only the benchmark's model (with --bench-out)")
    args = parser.parse_args()
    written = []
    if not args.bench_only:
        written = write_model_folder(args.out / "tiny-bert", TEST_HIDDEN)
        ref = args.out / "tiny-bert" / "reference.json"
        ref.write_text(json.dumps(reference(), indent=1) + "\n")
        written.append(ref)
    if args.bench_out is not None:
        written += write_model_folder(args.bench_out / f"tiny-bert-{BENCH_HIDDEN}", BENCH_HIDDEN)
    for path in written:
        print(f"wrote {path} ({path.stat().st_size} B)")


if __name__ == "__main__":
    main()
