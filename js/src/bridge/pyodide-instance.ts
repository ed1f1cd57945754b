/**
 * The check both loaders (`loadWebDLPack`, `loadWebDLPackC`) make first: is
 * the argument the object `await loadPyodide()` returned?
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";

/**
 * Throw INVALID_ARGUMENT (field `pyodide`) unless `pyodide` is an object
 * with every member in `members` (not undefined or null). `fn` names the
 * caller in the message.
 */
export function checkPyodideInstance<T>(
  pyodide: unknown,
  members: readonly string[],
  fn: string,
): asserts pyodide is T {
  const expected = "the object `await loadPyodide()` returned";
  if (pyodide === null || typeof pyodide !== "object") {
    throw new WebDLPackError("INVALID_ARGUMENT", `${fn} needs a Pyodide instance`, {
      field: "pyodide",
      value: describeValue(pyodide),
      expected,
    });
  }
  const missing = members.filter((m) => (pyodide as Record<string, unknown>)[m] == null);
  if (missing.length > 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", `not a Pyodide instance (no ${missing.join(", ")})`, {
      field: "pyodide",
      value: `an object without ${missing.join(", ")}`,
      expected,
    });
  }
}
