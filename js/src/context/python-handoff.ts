/**
 * The page-wide list of Python bridges, so a JS tensor can hand itself to
 * Python (`tensor.toPython()`) without the caller knowing Pyodide or holding
 * the bridge object. `loadWebDLPack(pyodide)` registers its bridge here.
 *
 * The list lives at `globalThis[Symbol.for("webdlpack.pythonHandoffs")]`, like
 * the context, so two copies of the library on one page see the same bridges.
 */
import { WebDLPackError } from "../errors.js";

/** What a bridge registers: the Pyodide it serves and its JS → Python hand-off. */
export interface PythonHandoff {
  /** The Pyodide instance (the object `loadPyodide()` returned). */
  readonly pyodide: object;
  /** Give `tensor` to Python: returns a `webdlpack.Tensor` PyProxy (see `WebDLPackPython.toPython`). */
  toPython(tensor: never, options: { copy?: boolean }): unknown;
  /**
   * What runs in that Python (`webdlpack.info()`: host, Python and Pyodide versions, the native or pure-Python
   * exchange and why), for {@link pythonRuntimes}.
   */
  readonly info?: Readonly<Record<string, unknown>>;
}

/** Global key of the shared list. */
export const PYTHON_HANDOFFS_KEY: symbol = Symbol.for("webdlpack.pythonHandoffs");

function handoffs(): PythonHandoff[] {
  const g = globalThis as unknown as Record<symbol, PythonHandoff[] | undefined>;
  let list = g[PYTHON_HANDOFFS_KEY];
  if (list === undefined) {
    list = [];
    g[PYTHON_HANDOFFS_KEY] = list;
  }
  return list;
}

/** Register (or replace) the bridge of `handoff.pyodide`. */
export function registerPythonHandoff(handoff: PythonHandoff): void {
  const list = handoffs();
  const at = list.findIndex((h) => h.pyodide === handoff.pyodide);
  if (at >= 0) list[at] = handoff;
  else list.push(handoff);
}

/**
 * What runs in each Python connected to the page's context (one entry per Pyodide that `loadWebDLPack` set up,
 * in order): its `webdlpack.info()` — which Pyodide and Python, whether the native or the pure-Python exchange
 * runs, and why a fallback happened.
 */
export function pythonRuntimes(): readonly Readonly<Record<string, unknown>>[] {
  return handoffs().map((h) => h.info ?? {});
}

/** Forget the bridge of `pyodide` (for a Pyodide that is being dropped). Returns whether one was registered. */
export function unregisterPythonHandoff(pyodide: object): boolean {
  const list = handoffs();
  const at = list.findIndex((h) => h.pyodide === pyodide);
  if (at < 0) return false;
  list.splice(at, 1);
  return true;
}

/**
 * The bridge for `pyodide`, or the only one when `pyodide` is not given.
 * Throws INVALID_ARGUMENT when there is none, when `pyodide` has none, or
 * when several Pyodide instances have one and `pyodide` is not given.
 */
export function findPythonHandoff(pyodide?: object): PythonHandoff {
  const list = handoffs();
  if (pyodide !== undefined) {
    const found = list.find((h) => h.pyodide === pyodide);
    if (found) return found;
    throw new WebDLPackError("INVALID_ARGUMENT", "webdlpack is not loaded into this Pyodide", {
      field: "options.pyodide",
      value: "a Pyodide without webdlpack",
      expected: "a Pyodide passed to `await loadWebDLPack(pyodide)` first",
    });
  }
  if (list.length === 1) return list[0]!;
  if (list.length === 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "no Python to hand the tensor to", {
      field: "options.pyodide",
      value: undefined,
      expected: "`await loadWebDLPack(pyodide)` before tensor.toPython()",
    });
  }
  throw new WebDLPackError("INVALID_ARGUMENT", `${list.length} Pyodide instances have webdlpack; say which one`, {
    field: "options.pyodide",
    value: undefined,
    expected: "tensor.toPython({pyodide})",
  });
}
