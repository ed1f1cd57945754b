# webdlpack from Python only: a GPU tensor goes through ONNX Runtime Web and back, no copy in between.
# The same cell/script runs in PyScript (main thread or worker) and in a JupyterLite notebook
# (docs/python-only.md); URLs are this repository's files, served as they are (make serve).
import array

import webdlpack
from pyodide.code import run_js

from js import location

# Absolute URLs: a worker (PyScript's runs from a blob: URL) has no page URL to resolve "/..." against.
SITE = location.origin
ORT = f"{SITE}/node_modules/onnxruntime-web/dist/"  # the WebGPU build of onnxruntime-web, and its wasm files
ort = await run_js(f"import('{ORT}ort.webgpu.min.mjs')")
ort.env.wasm.wasmPaths = ORT
ort.env.wasm.numThreads = 1

# import webdlpack brought up its JS half and the page's WebGPU device: tensors on "webgpu:0" live there.
x = webdlpack.asarray(array.array("f", [-2, -1, 0, 1, 2, 3]), device="webgpu:0")  # one upload
session = await webdlpack.frameworks.ort.create_session(ort, f"{SITE}/tests/data/relu_dynamic.onnx")  # Y = Relu(X)
outputs = await webdlpack.frameworks.ort.run(session, {"X": x})  # ORT reads x's GPU buffer in place
y = outputs["Y"]  # a webdlpack tensor over ORT's output buffer, on the same device
values = (await webdlpack.to_cpu_async(y)).tolist()  # the one readback
assert y.device == x.device and values == [0.0, 0.0, 0.0, 1.0, 2.0, 3.0], values
for t in (x, y):
    t.dispose()  # GPU memory back now (ORT gets its output buffer back)
js_half = webdlpack.js_half_status()  # who brought up the JS half, in which thread, on which GPU adapter
print("webdlpack + onnxruntime-web in", js_half["realm"], "on", js_half["device"], "->", values)
