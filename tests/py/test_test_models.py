"""The committed test models are what their scripts make: regenerating gives the same bytes.

Covers ``scripts/make_tflite_model.py`` (LiteRT.js models) and
``scripts/make_transformers_model.py`` (the Transformers.js model folder), and
checks each model against NumPy: the ``.tflite`` read back through the TFLite
schema, the ONNX graph run by ``onnx.reference``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def _script(name: str) -> ModuleType:
    """Import ``scripts/<name>.py`` as a module."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def _relative_files(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` by its path relative to it."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_tflite_models_regenerate_byte_identical(tmp_path: Path) -> None:
    mod = _script("make_tflite_model")
    written = mod.write_all(tmp_path)
    assert [p.name for p in written] == [
        "litert_fc.tflite",
        "litert_fc16_16.tflite",
        "litert_fc16_262144.tflite",
        "litert_chain_reference.json",
    ]
    for path in written:
        assert path.read_bytes() == (DATA / path.name).read_bytes(), (
            f"{path.name} differs from tests/data (rerun the script)"
        )


def test_tflite_model_reads_back_as_the_layer() -> None:
    mod = _script("make_tflite_model")
    data = (DATA / "litert_fc.tflite").read_bytes()
    assert data[4:8] == b"TFL3"
    ref = json.loads((DATA / "litert_chain_reference.json").read_text())
    x = np.asarray(ref["input"], dtype=np.float32)
    y = mod.evaluate_tflite(data, x)
    np.testing.assert_array_equal(y, np.asarray(ref["litert"], dtype=np.float32))
    weight, bias = mod.fc_weights()
    np.testing.assert_allclose(y, x @ weight.T + bias, rtol=1e-6)
    with pytest.raises(ValueError, match="input shape"):
        mod.evaluate_tflite(data, np.zeros((3, 8), dtype=np.float32))
    with pytest.raises(ValueError, match="TFL3"):
        mod.evaluate_tflite(b"\0" * len(data), x)


def test_tflite_chain_reference_follows_the_mlp() -> None:
    ref = json.loads((DATA / "litert_chain_reference.json").read_text())
    mlp = json.loads((DATA / "mlp_reference.json").read_text())
    y1 = np.asarray(ref["litert"], dtype=np.float32)
    w, b = np.asarray(mlp["weight"], dtype=np.float32), np.asarray(mlp["bias"], dtype=np.float32)
    y2 = np.maximum(y1 @ w + b, 0)
    np.testing.assert_allclose(np.asarray(ref["ort"]), y2, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(np.asarray(ref["tfjs_sigmoid"]), 1 / (1 + np.exp(-y2)), rtol=1e-6)
    assert y2.min() == 0 and y2.max() > 0  # Relu clips some values and keeps others


def test_transformers_model_folder_regenerates_byte_identical(tmp_path: Path) -> None:
    mod = _script("make_transformers_model")
    mod.write_model_folder(tmp_path / "tiny-bert", mod.TEST_HIDDEN)
    (tmp_path / "tiny-bert" / "reference.json").write_text(json.dumps(mod.reference(), indent=1) + "\n")
    assert _relative_files(tmp_path / "tiny-bert") == _relative_files(DATA / "transformers" / "tiny-bert")


def test_transformers_graph_matches_numpy_and_masks_padding() -> None:
    onnx = pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    mod = _script("make_transformers_model")
    model = onnx.load(str(DATA / "transformers" / "tiny-bert" / "onnx" / "model.onnx"))
    assert [i.name for i in model.graph.input] == ["input_ids", "attention_mask"]
    assert [o.name for o in model.graph.output] == ["last_hidden_state"]
    ref = json.loads((DATA / "transformers" / "tiny-bert" / "reference.json").read_text())
    assert ref["ids"] == mod.tokenize(ref["text"]) and mod.VOCAB["[UNK]"] in ref["ids"]
    ids = np.asarray([ref["ids"], ref["ids"][:4] + [0] * (len(ref["ids"]) - 4)], dtype=np.int64)
    mask = (np.arange(ids.shape[1]) < np.asarray([[len(ref["ids"])], [4]])).astype(np.int64)
    (y,) = ReferenceEvaluator(model).run(None, {"input_ids": ids, "attention_mask": mask})
    np.testing.assert_allclose(y[:1], np.asarray(ref["last_hidden_state"], dtype=np.float32), rtol=1e-6, atol=1e-7)
    assert np.all(y[1, 4:] == 0)  # padded positions are masked out
    np.testing.assert_allclose(y[1, :4], y[0, :4], rtol=1e-6)


def test_decoder_model_folder_regenerates_byte_identical_and_matches_numpy(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    mod = _script("make_decoder_model")
    mod.write_folder(tmp_path / "tiny-gpt2")
    folder = DATA / "transformers" / "tiny-gpt2"
    assert _relative_files(tmp_path / "tiny-gpt2") == _relative_files(folder)
    ref = json.loads((folder / "reference.json").read_text())
    model = onnx.load(str(folder / "onnx" / "model.onnx"))
    assert [o.name for o in model.graph.output] == ["logits", "present.0.key", "present.0.value"]
    ids = np.asarray([ref["ids"]], dtype=np.int64)
    empty = np.zeros((1, 1, 0, 8), dtype=np.float32)
    feeds = {
        "input_ids": ids,
        "attention_mask": np.ones_like(ids),
        "past_key_values.0.key": empty,
        "past_key_values.0.value": empty,
    }
    logits, key, value = ReferenceEvaluator(model).run(None, feeds)
    np.testing.assert_allclose(logits, np.asarray(ref["logits"], dtype=np.float32), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(key[0, 0], np.asarray(ref["embedding"], dtype=np.float32)[ref["ids"]])
    # A second step appends to the cache it is given.
    step = {
        "input_ids": ids[:, :1],
        "attention_mask": np.ones((1, 4), dtype=np.int64),
        "past_key_values.0.key": key,
        "past_key_values.0.value": value,
    }
    _, key2, _ = ReferenceEvaluator(model).run(None, step)
    assert key2.shape == (1, 1, 4, 8)
