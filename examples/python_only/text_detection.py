# A real pretrained model from Python only: PP-OCRv4 text detection (the ONNX file of the PyPI package
# rapidocr-onnxruntime, which `make real-models` puts in build/real-models; docs/real-models.md) runs in ONNX
# Runtime Web on the page's shared WebGPU device, and Python finds the text lines in its output — the input made
# and the output read by Python, handed to ORT and back without a copy. Runs as a PyScript script or a
# JupyterLite cell, like ort_on_gpu.py (docs/python-only.md).
import array

import webdlpack
from pyodide.code import run_js

from js import location

SITE = location.origin
ORT = f"{SITE}/node_modules/onnxruntime-web/dist/"
ort = await run_js(f"import('{ORT}ort.webgpu.min.mjs')")
ort.env.wasm.wasmPaths = ORT
ort.env.wasm.numThreads = 1

# A picture of three "lines of text" (dark strokes on white), H x W, normalised as PP-OCR expects: (v/255 - 0.5)/0.5.
H, W = 96, 320
LINE_ROWS = [(40, 56), (72, 88)]  # the two text lines (y from, y to) the picture has


def pixel(y: int, x: int) -> float:
    """The picture's value at (y, x), already normalised."""
    in_line = any(a <= y < b for a, b in LINE_ROWS) and 16 <= x < W - 48
    stroke = in_line and x % 12 < 7
    return ((20 if stroke else 245) / 255 - 0.5) / 0.5


plane = array.array("f", (pixel(y, x) for y in range(H) for x in range(W)))
picture = webdlpack.from_buffer(plane * 3, shape=(1, 3, H, W))  # the same grey in R, G and B
x = webdlpack.asarray(picture, device="webgpu:0")  # one upload

session = await webdlpack.frameworks.ort.create_session(ort, f"{SITE}/build/real-models/ppocr-det/model.onnx")
outputs = await webdlpack.frameworks.ort.run(session, {"x": x})  # ORT reads x's GPU buffer in place
prob = outputs["sigmoid_0.tmp_0"]  # [1, 1, H, W] text probability, over ORT's own output buffer
values = memoryview(await webdlpack.to_cpu_async(prob)).cast("B").cast("f")  # the one readback

# Python's post-processing: rows where text is likely, grouped into bands (one band per line of text).
row_hits = [sum(values[y * W + c] > 0.3 for c in range(W)) for y in range(H)]
bands, start = [], None
for y, hits in enumerate([*row_hits, 0]):
    if hits > W // 10 and start is None:
        start = y
    elif hits <= W // 10 and start is not None:
        bands.append((start, y))
        start = None
# Each band overlaps one of the drawn lines.
assert len(bands) == len(LINE_ROWS), (bands, LINE_ROWS)
assert all(a < lb and la < b for (a, b), (la, lb) in zip(bands, LINE_ROWS)), (bands, LINE_ROWS)
for t in (x, prob):
    t.dispose()
print("webdlpack text detection in", webdlpack.js_half_status()["realm"], "->", len(bands), "lines at rows", bands)
