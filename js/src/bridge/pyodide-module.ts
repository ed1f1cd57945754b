/**
 * The JS module Python imports as `webdlpack_js`: the tensor hand-over both ways
 * (addresses of managed structs in the wasm heap), deleter calls, and the GPU
 * functions of pyodide-gpu.ts. Two loaders register it: `loadWebDLPack`
 * (pyodide.ts, a page that writes JS) and the Python package itself when no
 * page did (js/src/from-python/attach.ts).
 */
import { getContext } from "../context/index.js";
import { describeValue } from "../describe-value.js";
import { dtypeOfTypedArray, emscriptenHost, itemsize, parseDType, type WasmHost } from "../dlpack/index.js";
import { WebDLPackError } from "../errors.js";
import { isBrandedTensor, looksLikeTensor, Tensor, type BrandedTensor } from "../tensor/index.js";
import { deleterCaller, exportCaller } from "./pyodide-callers.js";
import { PYTHON_GPU_OWNER, pythonGPUModule } from "./pyodide-gpu.js";
import { teachPyodideFloat16 } from "./pyodide-float16.js";
import type { PyodideModuleLike, PyodideWithModule } from "./pyodide-types.js";

/** Name of the JS module the Python package imports (`import webdlpack_js`). */
export const PYTHON_JS_MODULE = "webdlpack_js";

export const VERSIONED = Object.freeze({ versioned: true, owner: PYTHON_GPU_OWNER });
/** The toManaged options of from_js's common case (one object, not one per export). */
const VERSIONED_EXPORT = Object.freeze({ versioned: true, holder: PYTHON_GPU_OWNER });

/**
 * The address of a managed struct (versioned or legacy) JS wrote for `value` (a Tensor, or a TypedArray: over the
 * heap lent in place, else copied); Python owns it. Throws INVALID_ARGUMENT for anything else.
 */
export function exportForPython(host: WasmHost, value: unknown, versioned: boolean, copy: boolean | undefined): number {
  let tensor: Tensor | BrandedTensor;
  let temporary = false;
  if (value instanceof Tensor || isBrandedTensor(value)) {
    // A Tensor of another copy of webdlpack (its own class) exports the same DLPack struct; GPU pointers are
    // the one shared context's, so nothing else differs.
    tensor = value;
  } else if (looksLikeTensor(value)) {
    throw new WebDLPackError(
      "INVALID_ARGUMENT",
      "this Tensor comes from another copy of webdlpack, too old to hand its tensors to this one (it has no " +
        'Symbol.for("webdlpack.tensor") brand): load one copy of webdlpack (dedupe it in the bundler), or upgrade the other',
      {
        field: "js_tensor",
        value: describeValue(value),
        expected: "a Tensor of a webdlpack copy with the brand (this version or newer)",
      },
    );
  } else if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    if (value.buffer === host.buffer) {
      // A TypedArray over the heap itself: lend those bytes, no copy.
      const dtype = dtypeOfTypedArray(value);
      tensor = Tensor.wasmView(host, {
        data: value.byteOffset,
        dtype,
        shape: [value.byteLength / itemsize(dtype)],
      });
    } else {
      tensor = Tensor.fromTypedArray(value);
    }
    temporary = true;
  } else {
    throw new WebDLPackError("INVALID_ARGUMENT", "from_js() / toPython() take a webdlpack Tensor or a TypedArray", {
      field: "js_tensor",
      value: describeValue(value),
      expected: "Tensor (of any copy of webdlpack on the page) | TypedArray",
    });
  }
  try {
    return tensor.toManaged(
      host,
      copy === undefined
        ? versioned
          ? VERSIONED_EXPORT
          : { versioned, holder: PYTHON_GPU_OWNER }
        : { versioned, copy, holder: PYTHON_GPU_OWNER },
    );
  } finally {
    // The export holds its own reference; a wrapper made here is not needed after it.
    if (temporary) tensor.dispose();
  }
}

/** The functions Python calls through `import webdlpack_js`. All addresses are unsigned. */
export function pythonFacingModule(host: WasmHost, module: PyodideModuleLike): Record<string, unknown> {
  const exportVersioned = (value: unknown) => exportForPython(host, value, true, undefined) >>> 0;
  return {
    /** Python → JS: adopt a managed struct Python exported; the JS Tensor owns it. */
    importManaged: (address: number, versioned: boolean) =>
      Tensor.fromManaged(host, address >>> 0, { versioned: versioned !== false, owner: PYTHON_GPU_OWNER }),
    /** `importManaged(address, true)` with one argument fewer to convert (the `to_js` path). */
    importVersioned: (address: number) => Tensor.fromManaged(host, address >>> 0, VERSIONED),
    /** JS → Python: export a JS tensor (or TypedArray) as a managed struct in the heap. */
    exportManaged: (value: unknown, versioned: boolean, copy: boolean | null | undefined) =>
      exportForPython(host, value, versioned !== false, copy === null ? undefined : copy),
    /**
     * `exportManaged(value, true, undefined)` with two arguments fewer to convert (the `from_js` path; Python's
     * native module calls it from C and takes the result as an unsigned int).
     */
    exportVersioned,
    /**
     * The table index of the entry the native module calls `exportVersioned` through from C with the PyObject*
     * of a JsProxy (pyodide-callers.ts), or 0 where this Pyodide lacks what it needs.
     */
    exportCallerIndex: () => exportCaller(module, exportVersioned)?.index ?? 0,
    /** Throw the error of the export that just failed through that entry. */
    takeExportError: () => exportCaller(module, exportVersioned)?.take(),
    /**
     * Call a managed struct's deleter (function-table entry `index`) with its address: Python's
     * ManagedOwner uses this instead of a ctypes call, which costs about twice as much in Pyodide.
     */
    callDeleter: (index: number, address: number) => host.callVoidPointer(index >>> 0, address >>> 0),
    /** The table index of the deleter caller for Python's native module (see {@link deleterCaller}). */
    deleterCallerIndex: () => deleterCaller(module, host).index,
    /** Throw the error of the deleter call that just failed through that caller. */
    takeDeleterError: () => deleterCaller(module, host).take(),
    /** True when `value` is a JS webdlpack Tensor, of this copy of webdlpack or another branded one. */
    isTensor: (value: unknown) => value instanceof Tensor || isBrandedTensor(value),
    /** The page-wide context (for GPU tensors). */
    context: () => getContext(),
    /** Parse a dtype name the JS way (lets Python check both sides agree). */
    parseDType: (name: string) => {
      const d = parseDType(name);
      return [d.code, d.bits, d.lanes];
    },
    // GPU allocation, upload, readback and copies (pyodide-gpu.ts).
    ...pythonGPUModule(host),
  };
}

/**
 * Register `webdlpack_js` in `pyodide`: {@link pythonFacingModule} plus `extra` members (the Python-loaded
 * JS half adds its framework functions), after teaching Pyodide float16 buffers (pyodide-float16.ts). Returns the
 * wasm host the module works on.
 */
export function registerPythonModule(pyodide: PyodideWithModule, extra: Record<string, unknown> = {}): WasmHost {
  const host = emscriptenHost(pyodide._module);
  teachPyodideFloat16(pyodide._module, host); // a Float16Array reaches Python as an "e" buffer (pyodide-float16.ts)
  pyodide.registerJsModule(PYTHON_JS_MODULE, { ...pythonFacingModule(host, pyodide._module), ...extra });
  return host;
}
