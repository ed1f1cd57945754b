/**
 * float16 between JS and Python in Pyodide. Pyodide (up to 314 at least) knows no `Float16Array`: a Python
 * attribute access that returns one (`jt.view` of a float16 tensor from `webdlpack.to_js`) raised
 * `RuntimeError: Unknown typed array type 'Float16Array'`, and Pyodide's own `to_js` of a Python buffer of
 * format `e` threw "Javascript has no Float16 support". Both tables are JS functions on Pyodide's module
 * (`_module.get_buffer_datatype`, `_module.processBufferFormatString`); this file wraps them so that:
 *
 * - Python sees a JS `Float16Array` as a buffer of struct format `"e"` (IEEE binary16, 2 bytes): `memoryview`,
 *   `to_py()`, `to_memoryview()`, `webdlpack.from_js` and NumPy (`np.asarray(view)`, dtype float16) accept it;
 * - JS sees a Python `"e"` buffer as a `Float16Array` where the engine has one, else as a `Uint16Array` of the
 *   raw bits — the same rule as a float16 tensor's `view` (dlpack/dtype.ts, `typedArrayFor`).
 *
 * Every other type goes to Pyodide's own functions unchanged. A Pyodide without these functions (a future one
 * that knows float16 itself, or one laid out differently) is left as it is.
 */
import { Float16ArrayCtor } from "../dlpack/index.js";
import type { WasmHost } from "../dlpack/index.js";

/** Pyodide's buffer tables as they appear on its Emscripten module (present in Pyodide 0.27 … 315). */
interface BufferTables {
  /** `[address of a format string, itemsize, typed]` for a TypedArray/ArrayBuffer/DataView (by constructor name). */
  get_buffer_datatype?: (view: unknown) => [number, number, boolean];
  /** `[TypedArray class, big-endian]` for a struct format string (`"<f"`, `"e"`, …). */
  processBufferFormatString?: (format: string, message?: string) => [unknown, boolean];
}

const taught = new WeakSet<object>();
/** Byte orders of a struct format prefix: true = big-endian (the `"e"` case only; others go to Pyodide). */
const BYTE_ORDER: Readonly<Record<string, boolean>> = {
  "": false,
  "@": false,
  "=": false,
  "<": false,
  ">": true,
  "!": true,
};

/**
 * Teach `module` (a Pyodide's `_module`) float16, once per module; `host` gives the heap for the `"e"` format
 * string (2 bytes, kept for the module's life, as Pyodide keeps its own format strings).
 */
export function teachPyodideFloat16(module: object, host: WasmHost): void {
  if (taught.has(module)) return;
  const tables = module as BufferTables;
  const datatype = tables.get_buffer_datatype;
  const formatOf = tables.processBufferFormatString;
  if (typeof datatype !== "function" || typeof formatOf !== "function") return;
  taught.add(module);
  let format = 0;
  tables.get_buffer_datatype = (view: unknown) => {
    if (Float16ArrayCtor === undefined || !(view instanceof Float16ArrayCtor)) return datatype(view);
    if (format === 0) {
      const address = host.malloc(2) >>> 0;
      if (address === 0) return datatype(view); // no memory: Pyodide's own answer (an error), nothing half-made
      new Uint8Array(host.buffer, address, 2).set([0x65, 0]); // "e\0"
      format = address;
    }
    return [format, 2, true];
  };
  tables.processBufferFormatString = (fmt: string, message?: string) => {
    const order = typeof fmt === "string" && fmt.endsWith("e") ? BYTE_ORDER[fmt.slice(0, -1)] : undefined;
    if (order === undefined) return formatOf(fmt, message);
    return [Float16ArrayCtor ?? Uint16Array, order];
  };
}
