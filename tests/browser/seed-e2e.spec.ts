/**
 * The seed's point, end to end in the real browser: Python in Pyodide writes a
 * DLManagedTensorVersioned with plain ctypes (no webdlpack Python code), JS
 * decodes it from the wasm heap and reads the same bytes with zero copies, and
 * JS calls the deleter through the wasm function table exactly once.
 */
import { test, expect } from "./fixtures.js";

const PYTHON_PRODUCER = `
import ctypes, array
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]
class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]
class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]
class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]
DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", DLTensor)]

values = array.array("f", [1.5, -2.0, 3.25, 4.0, 5.5, -6.75])
base = values.buffer_info()[0]
shape = (ctypes.c_int64 * 2)(2, 2)
deleter_calls = []
keep = {}
@DELETER
def deleter(address):
    deleter_calls.append(address)
    keep.pop(address, None)
m = DLManagedTensorVersioned()
m.version.major, m.version.minor = 1, 1
m.deleter = deleter
m.flags = 0
m.dl_tensor.data = base
m.dl_tensor.device = DLDevice(1, 0)
m.dl_tensor.ndim = 2
m.dl_tensor.dtype = DLDataType(2, 32, 1)
m.dl_tensor.shape = shape
m.dl_tensor.strides = None
m.dl_tensor.byte_offset = 8          # skip the first two floats
address = ctypes.addressof(m)
keep[address] = (m, shape, values)
sizes = (ctypes.sizeof(DLTensor), DLManagedTensorVersioned.dl_tensor.offset, ctypes.sizeof(DLManagedTensorVersioned))
`;

test("Python writes a DLManagedTensorVersioned, JS reads it zero-copy and calls the deleter once", async ({
  shared,
}) => {
  const result = await shared.evaluate(async (code) => {
    const w = window as unknown as {
      pyodide: { runPython(c: string): unknown; globals: { get(n: string): unknown }; _module: never };
      webdlpack: typeof import("../../js/src/index.js");
    };
    const py = w.pyodide;
    py.runPython(code);
    const address = Number(py.globals.get("address"));
    const base = Number(py.globals.get("base"));
    const sizes = (py.runPython("list(sizes)") as { toJs(): number[] }).toJs();
    const host = w.webdlpack.emscriptenHost(py._module);
    const tensor = w.webdlpack.Tensor.fromManaged(host, address);
    const view = tensor.view as Float32Array;
    const sameMemory = view.buffer === host.buffer;
    const byteOffset = view.byteOffset;
    const values = Array.from(view);
    const shape = [...tensor.shape];
    const dtype = w.webdlpack.formatDType(tensor.dtype);
    // JS writes through its view; Python sees it (same bytes).
    view[0] = 42;
    const pythonSees = Number(py.runPython("values[2]"));
    const callsBefore = Number(py.runPython("len(deleter_calls)"));
    tensor.dispose();
    tensor.dispose(); // a second dispose is a no-op
    const calls = (py.runPython("list(deleter_calls)") as { toJs(): number[] }).toJs();
    let useAfterDispose = "";
    try {
      void tensor.view;
    } catch (e) {
      useAfterDispose = (e as { code?: string }).code ?? String(e);
    }
    return {
      address,
      base,
      sizes,
      sameMemory,
      byteOffset,
      values,
      pythonSees,
      callsBefore,
      calls,
      useAfterDispose,
      shape,
      dtype,
    };
  }, PYTHON_PRODUCER);

  expect(result.sizes).toEqual([40, 24, 64]); // wasm32 layout, as the header says
  expect(result.shape).toEqual([2, 2]);
  expect(result.dtype).toBe("float32");
  expect(result.sameMemory).toBe(true); // the view is on the wasm memory itself
  expect(result.byteOffset).toBe(result.base + 8); // data + byte_offset
  expect(result.values).toEqual([3.25, 4.0, 5.5, -6.75]);
  expect(result.pythonSees).toBe(42);
  expect(result.callsBefore).toBe(0);
  expect(result.calls).toEqual([result.address]); // exactly once, with self
  expect(result.useAfterDispose).toBe("DISPOSED");
});
