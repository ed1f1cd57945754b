/**
 * emscriptenHost over a real Emscripten module: Pyodide's (`pyodide._module`),
 * loaded in Node from node_modules. Checks malloc/free, function-table calls
 * with the "vi" signature, the codec and Tensor on its heap, and views
 * re-derived after its memory grows.
 */
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { test } from "node:test";
import { loadPyodide } from "pyodide";
import { DeviceType, emscriptenHost, readManagedTensorVersioned, type EmscriptenModuleLike } from "../../js/src/dlpack/index.js";
import { Tensor } from "../../js/src/tensor/index.js";
import { expectError, produce } from "./helpers.js";

test("codec and Tensor on Pyodide's Emscripten heap", { timeout: 120_000 }, async () => {
  const indexURL = dirname(createRequire(import.meta.url).resolve("pyodide/package.json")) + "/";
  const pyodide = await loadPyodide({ indexURL });
  const module = (pyodide as unknown as { _module: EmscriptenModuleLike })._module;
  const host = emscriptenHost(module);

  const prod = produce(host, { device: { deviceType: DeviceType.kDLCPU, deviceId: 0 }, dtype: "uint8", shape: [4] }, 4);
  const desc = readManagedTensorVersioned(host, prod.address);
  assert.equal(desc.deleter, prod.deleterIndex);
  const t = Tensor.fromManaged(host, prod.address);
  assert.deepEqual([...(t.view as Uint8Array)], [3, 10, 17, 24]);

  // Export through the real table; call the deleter the way C would.
  const a = t.toManaged(host);
  const e = readManagedTensorVersioned(host, a);
  assert.equal(e.data, prod.data);
  host.callVoidPointer(e.deleter, a);
  expectError(() => host.callVoidPointer(e.deleter, a), "INVALID_POINTER", "function index");
  expectError(() => host.removeFunction(e.deleter), "INVALID_POINTER", "function index");

  // Table entries are pooled: a freed one is reused, live ones are distinct,
  // and each export's deleter still runs once.
  const a1 = t.toManaged(host);
  const d1 = readManagedTensorVersioned(host, a1).deleter;
  assert.equal(d1, e.deleter, "the freed entry is reused");
  const a2 = t.toManaged(host);
  const d2 = readManagedTensorVersioned(host, a2).deleter;
  assert.notEqual(d2, d1, "two live exports, two entries");
  host.callVoidPointer(d2, a2);
  host.callVoidPointer(d1, a1);
  expectError(() => host.callVoidPointer(d1, a1), "INVALID_POINTER", "function index");
  const tableSize = module.wasmTable!.length;
  for (let i = 0; i < 50; i++) {
    const x = t.toManaged(host);
    host.callVoidPointer(readManagedTensorVersioned(host, x).deleter, x);
  }
  assert.equal(module.wasmTable!.length, tableSize, "no table growth for sequential exports");
  // A second host over the same module shares the pool.
  const again = emscriptenHost(module);
  const f = again.addFunction(() => undefined);
  assert.ok([d1, d2].includes(f));
  again.removeFunction(f);

  // Grow the heap: the old view detaches, tensor.view follows.
  const before = t.view;
  const oldSize = host.buffer.byteLength;
  const big = host.malloc(oldSize); // more than the free heap: forces growth
  assert.notEqual(big, 0);
  assert.ok(host.buffer.byteLength > oldSize);
  assert.equal(before.length, 0, "old view detached");
  assert.deepEqual([...(t.view as Uint8Array)], [3, 10, 17, 24]);
  host.free(big);

  t.dispose();
  assert.equal(prod.calls(), 1);
});
