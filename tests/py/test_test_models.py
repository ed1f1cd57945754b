"""The committed test models are what their scripts make, on every CPU.

Covers ``scripts/make_test_model.py`` (ONNX), ``scripts/make_tflite_model.py`` (LiteRT.js models),
``scripts/make_transformers_model.py`` and ``make_decoder_model.py`` (the Transformers.js model folders),
``scripts/make_tvm_reference.py`` (the TVM chain's reference), and
checks each model against NumPy: the ``.tflite`` read back through the TFLite schema, the ONNX graphs run by
``onnx.reference``. Model files hold weights made by integer arithmetic (``scripts/exact_values.py``), so they
regenerate to the same bytes on any CPU; the JSON references hold NumPy results (matrix products, ``exp``,
``tanh``), which may differ in the last bit between CPUs, so they are compared with a tolerance.
"""

from __future__ import annotations

import importlib.util
import json
import math
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


#: How close a regenerated reference value must be to the committed one (float32 results, last-bit differences).
REL_TOL, ABS_TOL = 1e-6, 1e-7


def _assert_json_close(new: object, old: object, where: str) -> None:
    """``new`` equals ``old`` in structure, strings, ints and bools; floats within :data:`REL_TOL` / :data:`ABS_TOL`."""
    if isinstance(old, float) or isinstance(new, float):
        assert isinstance(new, (int, float)) and isinstance(old, (int, float)), f"{where}: {new!r} vs {old!r}"
        assert math.isclose(new, old, rel_tol=REL_TOL, abs_tol=ABS_TOL), f"{where}: {new!r} vs {old!r}"
    elif isinstance(old, dict):
        assert isinstance(new, dict) and sorted(new) == sorted(old), f"{where}: keys differ"
        for key in old:
            _assert_json_close(new[key], old[key], f"{where}.{key}")
    elif isinstance(old, list):
        assert isinstance(new, list) and len(new) == len(old), f"{where}: lengths differ"
        for i, (a, b) in enumerate(zip(new, old)):
            _assert_json_close(a, b, f"{where}[{i}]")
    else:
        assert new == old, f"{where}: {new!r} vs {old!r}"


def assert_regenerated(files: dict[str, Path], committed: Path) -> None:
    """Each file the script wrote is the committed one: JSON within tolerances, every other file byte for byte."""
    for name, path in files.items():
        old = committed / name
        assert old.is_file(), f"{name}: not in {committed} (rerun the script)"
        if name.endswith(".json"):
            _assert_json_close(json.loads(path.read_text()), json.loads(old.read_text()), name)
        else:
            # exact: model files hold only structure and weights made by integer arithmetic (exact_values.py)
            assert path.read_bytes() == old.read_bytes(), f"{name} differs from {committed} (rerun the script)"


def _relative_files(folder: Path) -> dict[str, Path]:
    """Every file under ``folder`` by its path relative to it."""
    return {str(p.relative_to(folder)): p for p in sorted(folder.rglob("*")) if p.is_file()}


def test_tflite_models_regenerate(tmp_path: Path) -> None:
    mod = _script("make_tflite_model")
    written = mod.write_all(tmp_path)
    assert [p.name for p in written] == [
        "litert_fc.tflite",
        "litert_fc16_16.tflite",
        "litert_fc16_262144.tflite",
        "litert_chain_reference.json",
    ]
    assert_regenerated({p.name: p for p in written}, DATA)


def test_onnx_models_regenerate(tmp_path: Path) -> None:
    mod = _script("make_test_model")
    mod.main_into(tmp_path / "data", tmp_path / "demo")
    assert_regenerated(_relative_files(tmp_path / "data"), DATA)
    assert_regenerated(_relative_files(tmp_path / "demo"), ROOT / "web" / "model")


def test_the_weights_are_exact_and_cpu_independent() -> None:
    exact = _script("exact_values")
    w = exact.exact_pattern((8, 8), (5, 3), 1, 0.5)
    assert w.dtype == np.float32 and w.min() == -0.5 and w.max() == 0.5
    # exact: every value is a multiple of 1/16 computed from integers, so scaling by 16 gives integers
    np.testing.assert_array_equal(w * 16, np.round(w * 16))
    with pytest.raises(ValueError, match="power of two"):
        exact.exact_pattern((2,), (1,), 0, 0.3)


def test_tflite_model_reads_back_as_the_layer() -> None:
    mod = _script("make_tflite_model")
    data = (DATA / "litert_fc.tflite").read_bytes()
    assert data[4:8] == b"TFL3"
    ref = json.loads((DATA / "litert_chain_reference.json").read_text())
    x = np.asarray(ref["input"], dtype=np.float32)
    y = mod.evaluate_tflite(data, x)
    np.testing.assert_allclose(y, np.asarray(ref["litert"], dtype=np.float32), rtol=1e-6, atol=1e-7)
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


def test_transformers_model_folder_regenerates(tmp_path: Path) -> None:
    mod = _script("make_transformers_model")
    mod.write_model_folder(tmp_path / "tiny-bert", mod.TEST_HIDDEN)
    (tmp_path / "tiny-bert" / "reference.json").write_text(json.dumps(mod.reference(), indent=1) + "\n")
    new, committed = _relative_files(tmp_path / "tiny-bert"), DATA / "transformers" / "tiny-bert"
    assert sorted(new) == sorted(_relative_files(committed))
    assert_regenerated(new, committed)


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


def test_decoder_model_folder_regenerates_and_matches_numpy(tmp_path: Path) -> None:
    onnx = pytest.importorskip("onnx")
    from onnx.reference import ReferenceEvaluator

    mod = _script("make_decoder_model")
    mod.write_folder(tmp_path / "tiny-gpt2")
    folder = DATA / "transformers" / "tiny-gpt2"
    new = _relative_files(tmp_path / "tiny-gpt2")
    assert sorted(new) == sorted(_relative_files(folder))
    assert_regenerated(new, folder)
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
    # exact: the cached keys are rows of the embedding table, gathered, not computed
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


def test_tvm_chain_reference_is_what_its_script_computes() -> None:
    ref = json.loads((DATA / "tvm_chain_reference.json").read_text())
    fresh = _script("make_tvm_reference").tvm_reference()
    assert ref.keys() == fresh.keys()
    for key in ("input", "mlp", "chain_ort", "chain_sigmoid", "chain_litert"):
        np.testing.assert_allclose(np.asarray(ref[key]), np.asarray(fresh[key]), rtol=1e-6, atol=1e-6, err_msg=key)
    for got, want in zip(ref["two_outputs"], fresh["two_outputs"]):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6)
    mlp = json.loads((DATA / "mlp_reference.json").read_text())
    np.testing.assert_allclose(np.asarray(ref["input"]), np.asarray(mlp["input"]), rtol=0, atol=0)
