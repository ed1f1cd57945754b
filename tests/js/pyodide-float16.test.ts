/**
 * teachPyodideFloat16 on a stand-in for Pyodide's module (bridge/pyodide-float16.ts): other types go to
 * Pyodide's own functions untouched, a struct format "e" becomes the runtime's Float16Array or, where there is
 * none (Node 20), a Uint16Array of the bits; a module without the tables is left alone; teaching twice is once.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { teachPyodideFloat16 } from "../../js/src/bridge/pyodide-float16.js";
import { Float16ArrayCtor } from "../../js/src/dlpack/index.js";
import { createTestHost } from "../../js/src/testing/index.js";

function fakeModule() {
  const seen: string[] = [];
  return {
    seen,
    get_buffer_datatype: (view: unknown): [number, number, boolean] => {
      seen.push(`datatype ${(view as object).constructor.name}`);
      return [0, 0, false];
    },
    processBufferFormatString: (fmt: string): [unknown, boolean] => {
      seen.push(`format ${fmt}`);
      if (fmt.endsWith("e")) throw new Error("Javascript has no Float16 support.");
      return [Float32Array, false];
    },
  };
}

test("struct format 'e' (any byte order prefix) becomes Float16Array where the runtime has one, else Uint16Array bits", () => {
  const m = fakeModule();
  teachPyodideFloat16(m, createTestHost());
  const expected = Float16ArrayCtor ?? Uint16Array;
  for (const [fmt, big] of [
    ["e", false],
    ["<e", false],
    ["@e", false],
    ["=e", false],
    [">e", true],
    ["!e", true],
  ] as const)
    assert.deepEqual(m.processBufferFormatString(fmt), [expected, big], fmt);
  // exact: a constructor and a flag, no float values
  assert.deepEqual(m.processBufferFormatString("<f"), [Float32Array, false]);
  assert.throws(() => m.processBufferFormatString("xe"), /no Float16 support/); // unknown prefix: Pyodide's own error
  assert.deepEqual(m.seen, ["format <f", "format xe"]);
});

test("other TypedArrays go to Pyodide's table; a Float16Array (where there is one) is format 'e', 2 bytes", () => {
  const host = createTestHost();
  const m = fakeModule();
  teachPyodideFloat16(m, host);
  // exact: Pyodide's table row (integers and a flag) for the Float32Array type, not its values
  assert.deepEqual(m.get_buffer_datatype(new Float32Array(1)), [0, 0, false]);
  assert.deepEqual(m.seen, ["datatype Float32Array"]);
  if (Float16ArrayCtor === undefined) return; // Node 20: no Float16Array to see; the browser spec covers it
  const [address, itemsize, typed] = m.get_buffer_datatype(new Float16ArrayCtor(2));
  assert.equal(itemsize, 2);
  assert.equal(typed, true);
  assert.deepEqual([...new Uint8Array(host.buffer, address, 2)], [0x65, 0]);
});

test("a module without Pyodide's tables is left as it is; teaching twice wraps once", () => {
  const bare: Record<string, unknown> = {};
  teachPyodideFloat16(bare, createTestHost());
  assert.deepEqual(Object.keys(bare), []);
  const m = fakeModule();
  teachPyodideFloat16(m, createTestHost());
  const once = m.processBufferFormatString;
  teachPyodideFloat16(m, createTestHost());
  assert.equal(m.processBufferFormatString, once);
});
