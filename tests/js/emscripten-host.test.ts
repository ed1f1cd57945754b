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
import {
  DeviceType,
  emscriptenHost,
  readManagedTensorVersioned,
  type EmscriptenModuleLike,
} from "../../js/src/dlpack/index.js";
import { Tensor, liveExportCount } from "../../js/src/tensor/index.js";
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
  const exportsLive = liveExportCount();
  host.callVoidPointer(e.deleter, a);
  assert.equal(liveExportCount(), exportsLive - 1);
  host.callVoidPointer(e.deleter, a); // a second call does nothing: no double free
  assert.equal(liveExportCount(), exportsLive - 1);

  // One deleter entry per host, shared by its exports; each export's deleter still runs once.
  const a1 = t.toManaged(host);
  const d1 = readManagedTensorVersioned(host, a1).deleter;
  assert.equal(d1, e.deleter, "the host's shared deleter");
  const a2 = t.toManaged(host);
  const d2 = readManagedTensorVersioned(host, a2).deleter;
  assert.equal(d2, d1, "two live exports, one entry");
  assert.notEqual(a2, a1);
  assert.equal(liveExportCount(), exportsLive + 1);
  host.callVoidPointer(d2, a2);
  host.callVoidPointer(d1, a1);
  host.callVoidPointer(d1, a1);
  assert.equal(liveExportCount(), exportsLive - 1);
  const tableSize = module.wasmTable!.length;
  for (let i = 0; i < 50; i++) {
    const x = t.toManaged(host);
    host.callVoidPointer(readManagedTensorVersioned(host, x).deleter, x);
  }
  assert.equal(module.wasmTable!.length, tableSize, "no table growth for sequential exports");
  // One host per module; its pooled entries are reused once removed, and a removed one is refused.
  assert.equal(emscriptenHost(module), host);
  const f = host.addFunction(() => undefined);
  const withF = module.wasmTable!.length;
  host.removeFunction(f);
  expectError(() => host.callVoidPointer(f, 0), "INVALID_POINTER", "function index");
  expectError(() => host.removeFunction(f), "INVALID_POINTER", "function index");
  const g = host.addFunction(() => undefined);
  assert.equal(g, f, "the freed entry is reused");
  host.removeFunction(g);
  assert.equal(module.wasmTable!.length, withF);

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
