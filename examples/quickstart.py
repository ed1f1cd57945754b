# Python quick start, in Pyodide: examples/python_in_pyodide.mjs runs it (run({file: "./quickstart.py"})).
import array

import webdlpack

x = webdlpack.from_buffer(array.array("f", [1, 2, 3, 4]), shape=(2, 2))  # a tensor over Python's bytes: no copy
g = webdlpack.asarray(x, device="webgpu:0")  # on the page's one GPUDevice, shared with every JS framework
jt = webdlpack.to_js(g)  # a JS Tensor over the same GPUBuffer (webdlpack/adapters hand it to ORT, TF.js...)
back = await webdlpack.to_cpu_async(g)  # GPU -> CPU
assert back.tolist() == [[1.0, 2.0], [3.0, 4.0]]
jt.dispose(), g.dispose()  # GPU memory goes back now, not at garbage collection
back.tolist()
