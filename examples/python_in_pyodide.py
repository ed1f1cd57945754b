# Python in Pyodide: examples/python_in_pyodide.mjs runs this file with pyodide.runPythonAsync
# after loadWebDLPack(pyodide) and getContext().setup(). The asserts prove each step.
import array

import webdlpack

src = array.array("f", range(12))
x = webdlpack.from_buffer(src, shape=(3, 4))  # a CPU tensor over src's bytes: no copy
jt = webdlpack.to_js(x)  # a JS Tensor; jt.view is a Float32Array on the same bytes
src[0] = 42.0  # ...so JS sees a write made in Python
assert jt.view[0] == 42.0 and x.__dlpack_device__() == (1, 0)
t = webdlpack.from_js(jt)  # back to Python: same address, no copy
assert t.data_ptr == x.data_ptr
y = webdlpack.from_dlpack(x)  # calls x.__dlpack__(max_version=(1, 1)): a capsule, consumed once
g = webdlpack.asarray(x, device="webgpu:0")  # upload: data_ptr is a GPU pointer of the page's context
jg = webdlpack.to_js(g)  # JS gets the very GPUBuffer: jg.gpuBuffer
assert g.__dlpack_device__() == (15, 0) and jg.data == g.data_ptr
c = webdlpack.from_dlpack(g, device="cpu", copy=True)  # sync readback (JSPI, inside runPythonAsync)
a = await webdlpack.to_cpu_async(g)  # or async, works everywhere
assert c.tolist() == a.tolist() == y.tolist() == [[42.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]]
with webdlpack.scope():  # tensors made inside are disposed at the end...
    tmp = webdlpack.zeros((1024,), "float32", device="webgpu:0")
    out = webdlpack.keep(webdlpack.asarray(x, device="webgpu:0"))  # ...unless kept
assert tmp.disposed and not out.disposed
for done in (jg, g, out, jt):  # GPU memory and JS exports go back now, not at GC
    done.dispose()
a.tolist()  # the value runPythonAsync returns
