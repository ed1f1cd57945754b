/** python-handoff.ts: the page-wide list of Python bridges behind `tensor.toPython()`. */
import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import { WebDLPackError } from "../../js/src/errors.js";
import {
  PYTHON_HANDOFFS_KEY,
  findPythonHandoff,
  registerPythonHandoff,
  unregisterPythonHandoff,
} from "../../js/src/context/python-handoff.js";
import { Tensor } from "../../js/src/tensor/index.js";
import { expectError } from "./helpers.js";

const pyodideA = { name: "A" };
const pyodideB = { name: "B" };

afterEach(() => {
  unregisterPythonHandoff(pyodideA);
  unregisterPythonHandoff(pyodideB);
});

function fakeBridge(
  pyodide: object,
  calls: unknown[][],
): { pyodide: object; toPython(t: never, o: { copy?: boolean }): unknown } {
  return {
    pyodide,
    toPython: (t, o) => {
      calls.push([pyodide, t, o]);
      return `proxy-from-${(pyodide as { name: string }).name}`;
    },
  };
}

test("tensor.toPython() without any bridge is INVALID_ARGUMENT naming what to call first", () => {
  const t = Tensor.fromTypedArray(new Float32Array(4));
  const err = expectError(() => t.toPython(), "INVALID_ARGUMENT");
  assert.equal(err.field, "options.pyodide");
  assert.match(String(err.expected), /loadWebDLPack/);
  t.dispose();
});

test("one bridge: tensor.toPython() uses it and passes the copy option through", () => {
  const calls: unknown[][] = [];
  registerPythonHandoff(fakeBridge(pyodideA, calls));
  const t = Tensor.fromTypedArray(new Float32Array(4));
  assert.equal(t.toPython(), "proxy-from-A");
  assert.equal(t.toPython({ copy: false }), "proxy-from-A");
  assert.deepEqual(calls, [
    [pyodideA, t, {}],
    [pyodideA, t, { copy: false }],
  ]);
  t.dispose();
});

test("several bridges: toPython needs {pyodide}; an unknown Pyodide is refused; re-registering replaces", () => {
  const callsA: unknown[][] = [];
  const callsB: unknown[][] = [];
  registerPythonHandoff(fakeBridge(pyodideA, []));
  registerPythonHandoff(fakeBridge(pyodideA, callsA)); // replaces the first
  registerPythonHandoff(fakeBridge(pyodideB, callsB));
  const t = Tensor.fromTypedArray(new Int32Array(2));
  const err = expectError(() => t.toPython(), "INVALID_ARGUMENT");
  assert.match(err.message, /2 Pyodide instances/);
  assert.equal(t.toPython({ pyodide: pyodideB }), "proxy-from-B");
  assert.equal(t.toPython({ pyodide: pyodideA }), "proxy-from-A");
  assert.equal(callsA.length, 1);
  assert.equal(callsB.length, 1);
  expectError(() => t.toPython({ pyodide: { name: "C" } }), "INVALID_ARGUMENT");
  assert.equal(unregisterPythonHandoff(pyodideB), true);
  assert.equal(unregisterPythonHandoff(pyodideB), false);
  assert.equal(findPythonHandoff().pyodide, pyodideA);
  t.dispose();
});

test("the list is shared through globalThis[Symbol.for(...)] (a second library copy sees it); a disposed tensor refuses", () => {
  registerPythonHandoff(fakeBridge(pyodideA, []));
  const shared = (globalThis as unknown as Record<symbol, { pyodide: object }[]>)[
    Symbol.for("webdlpack.pythonHandoffs")
  ];
  assert.equal(PYTHON_HANDOFFS_KEY, Symbol.for("webdlpack.pythonHandoffs"));
  assert.ok(shared?.some((h) => h.pyodide === pyodideA));
  const t = Tensor.fromTypedArray(new Float32Array(1));
  t.dispose();
  assert.throws(
    () => t.toPython(),
    (e: unknown) => e instanceof WebDLPackError && e.code === "DISPOSED",
  );
});
