# TensorFlow.js from Python only: a webdlpack GPU tensor becomes a tf.Tensor over the same GPUBuffer, and back.
# Runs as a PyScript script or a JupyterLite cell, like ort_on_gpu.py (docs/python-only.md).
import array

import webdlpack
from pyodide.code import run_js
from pyodide.ffi import to_js

from js import Object, location

# @tensorflow/tfjs-core and @tensorflow/tfjs-backend-webgpu as one ES module (make builds it from web/).
tfjs = await run_js(f"import('{location.origin}/build/web/tfjs-webgpu.js')")
tf = tfjs.tf
await webdlpack.frameworks.tfjs.use_shared_device(tf, tfjs.WebGPUBackend)  # TF.js's "webgpu" backend, our device

x = webdlpack.asarray(array.array("f", [-1, 0, 1, 2]), device="webgpu:0")
t = await webdlpack.frameworks.tfjs.to_tfjs(tf, x)  # a tf.Tensor over x's own GPUBuffer
how = webdlpack.frameworks.handoff(t)  # shared bytes or a copy, and why
assert how == {"zero_copy": True, "reason": None}, how
y = await webdlpack.frameworks.tfjs.from_tfjs(tf, tf.relu(t))  # TF.js's result as a webdlpack tensor, no copy
assert (await webdlpack.to_cpu_async(y)).tolist() == [0.0, 0.0, 1.0, 2.0]

# The same hand-over by hand, with only Pyodide's JS access: to_js gives the JS tensor and its GPUBuffer.
jx = webdlpack.to_js(x)
desc = to_js({"buffer": jx.gpuBuffer, "zeroCopy": True}, dict_converter=Object.fromEntries)
by_hand = tf.tensor(desc, to_js([4]), "float32")  # TF.js reads x's buffer; keep jx until TF.js is done with it
values = (await tf.relu(by_hand).data()).to_py().tolist()
assert values == [0.0, 0.0, 1.0, 2.0], values
for done in (t, by_hand, jx, x, y):
    done.dispose()
print("webdlpack + TensorFlow.js in", webdlpack.js_half_status()["realm"], "->", values)
