/**
 * The JS functions Python's native module (py/native/) calls from C, as wasm-table entries made once per
 * Pyodide module. Each runs its work inside try/catch and returns a number: a JS exception must not unwind
 * through CPython's frames. On failure it keeps the error and returns its failure value; the C side then calls
 * the caller's `take()` through Python, which throws that error as a JsException (translated to a typed
 * webdlpack error by Python).
 */
import type { WasmHost } from "../dlpack/index.js";
import { WebDLPackError } from "../errors.js";
import type { PyodideModuleLike } from "./pyodide-types.js";

/** A table entry C calls, and how Python gets the error of its last failed call. */
export interface CaughtCaller {
  /** The wasm-table index (a C function pointer). */
  readonly index: number;
  /** Throw the error the last failed call kept. */
  take(): never;
}

/** Pyodide's C functions for JsProxy objects, exported by its main module (0.27 through 315 have both). */
interface JsProxyAccess {
  /** 1 when the PyObject* is a JsProxy (of any JsProxy type), else 0. */
  _JsProxy_Check(object: number): number;
  /** The JS value of a JsProxy (its PyObject*). */
  _JsProxy_Val(object: number): unknown;
}

const callers = new WeakMap<object, Map<string, CaughtCaller>>();

function caughtCaller(
  module: PyodideModuleLike,
  name: string,
  signature: "ii" | "iii",
  failedValue: number,
  work: (a: number, b: number) => number,
): CaughtCaller {
  let byName = callers.get(module);
  if (byName === undefined) {
    byName = new Map();
    callers.set(module, byName);
  }
  let caller = byName.get(name);
  if (caller === undefined) {
    let failure: unknown;
    let failed = false;
    const index =
      module.addFunction((a: number, b: number) => {
        try {
          return work(a, b);
        } catch (err) {
          failure = err;
          failed = true;
          return failedValue;
        }
      }, signature) >>> 0;
    caller = {
      index,
      take(): never {
        const err = failed
          ? failure
          : new WebDLPackError("INVALID_ARGUMENT", `no ${name} call failed`, {
              field: name,
              value: null,
              expected: `a failed ${name} call just before`,
            });
        failure = undefined;
        failed = false;
        throw err;
      },
    };
    byName.set(name, caller);
  }
  return caller;
}

/**
 * `int f(fn, address)`: calls deleter `fn` (a table entry) with `address`; 0, or 1 when it threw. The native
 * module's owners release imported structs through it.
 */
export function deleterCaller(module: PyodideModuleLike, host: WasmHost): CaughtCaller {
  return caughtCaller(module, "deleter", "iii", 1, (fn, address) => {
    host.callVoidPointer(fn >>> 0, address >>> 0);
    return 0;
  });
}

/** What `exportCaller`'s entry returns when the export threw (no struct address is 0xFFFFFFFF: they are aligned). */
export const EXPORT_FAILED = -1;

/**
 * `int f(object)` for from_js's common case, called by the native module with the PyObject* of from_js's argument:
 * when it is a JsProxy, `exportVersioned` of its JS value (the unsigned address of a new versioned struct Python
 * owns), reached without Pyodide's Python → JS call (which converts the arguments and the result: about 0.3 µs);
 * 0 when it is not a JsProxy (the native module then calls `exportVersioned` through Pyodide, which converts
 * the value as it does for any call); {@link EXPORT_FAILED} when the export threw. Undefined where Pyodide's
 * module does not export `_JsProxy_Check` and `_JsProxy_Val`.
 */
export function exportCaller(
  module: PyodideModuleLike,
  exportVersioned: (value: unknown) => number,
): CaughtCaller | undefined {
  const access = module as PyodideModuleLike & Partial<JsProxyAccess>;
  const check = access._JsProxy_Check;
  const value = access._JsProxy_Val;
  if (typeof check !== "function" || typeof value !== "function") return undefined;
  return caughtCaller(module, "export", "ii", EXPORT_FAILED, (object) =>
    check(object) === 0 ? 0 : exportVersioned(value(object)),
  );
}
