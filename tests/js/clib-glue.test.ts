/**
 * The JS glue of the C library (js/src/bridge/clib/): the handle table, error
 * mapping and heap strings as pure logic, then the whole path in Node: Pyodide
 * loads wasm/build/libwebdlpack.so through loadWebDLPackC, Python calls it
 * with ctypes, and C reaches a real WebDLPackContext (PageContext) whose
 * WebGPU is the fake from context-fakes.ts.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { before, test } from "node:test";
import { pathToFileURL } from "node:url";
import {
  TensorHandleTable,
  errorFromC,
  hostErrorOf,
  loadWebDLPackC,
  readCString,
  writeCString,
  type ClibModule,
  type ClibPyodide,
  type WebDLPackCLib,
} from "../../js/src/bridge/clib/index.js";
import { PageContext } from "../../js/src/context/context.js";
import { moduleAllocator } from "../../js/src/dlpack/index.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { ErrorCode, WebDLPackError } from "../../js/src/errors.js";
import { asGPU, FakeGPU } from "./context-fakes.js";
import { isCode, repoRoot, wasmBuildOutput } from "./helpers.js";

const ROOT = repoRoot();

// ---- pure logic ------------------------------------------------------------

test("handle table: put/take once, already-taken and unknown handles differ", () => {
  const t = new TensorHandleTable();
  const a = t.put(0x1000);
  const b = t.put(0x80000010); // above 2 GiB stays unsigned
  assert.ok(a > 0 && b > a);
  assert.equal(t.size, 2);
  assert.equal(t.take(b), 0x80000010);
  assert.throws(() => t.take(b), isCode("ALREADY_CONSUMED", /already taken/));
  assert.throws(() => t.take(999), isCode("INVALID_ARGUMENT", /unknown tensor handle 999/));
  assert.throws(() => t.take(0), isCode("INVALID_ARGUMENT"));
  assert.throws(() => t.put(0), isCode("NULL_POINTER"));
  assert.equal(t.has(a), true);
  assert.deepEqual(t.drain(), [0x1000]);
  assert.equal(t.size, 0);
  assert.notEqual(t.put(0x2000), a, "handles are never reused");
});

test("errors: C last error → typed error; caught JS values → code + message", () => {
  const e = errorFromC(ErrorCode.STALE_POINTER, "[STALE_POINTER] freed; field ptr; value 0x10", "wdl_webgpu_query");
  assert.equal(e.code, "STALE_POINTER");
  assert.match(e.message, /^\[STALE_POINTER\] wdl_webgpu_query: freed; field ptr; value 0x10$/);
  const odd = errorFromC(77, "x", "f");
  assert.equal(odd.code, "GPU_ERROR");
  assert.match(odd.message, /code 77/);
  const typed = hostErrorOf(new WebDLPackError("DEVICE_LOST", "device 0 lost"));
  assert.deepEqual(typed, { code: ErrorCode.DEVICE_LOST, message: "[DEVICE_LOST] device 0 lost" });
  // an error object from another copy of the library: recognised by errno
  assert.equal(hostErrorOf({ errno: 16, message: "[INVALID_POINTER] other copy" }).code, ErrorCode.INVALID_POINTER);
  const plainError = hostErrorOf(new TypeError("boom"));
  assert.equal(plainError.code, ErrorCode.GPU_ERROR);
  assert.match(plainError.message, /TypeError: boom/);
  assert.equal(hostErrorOf("text").code, ErrorCode.GPU_ERROR);
});

test("heap strings: views re-read after growth, truncation on a character boundary", () => {
  const heap = { HEAPU8: new Uint8Array(64) };
  assert.equal(writeCString(heap, 8, 32, "hello"), 5);
  heap.HEAPU8 = new Uint8Array(128); // "growth": a new view, old contents copied
  heap.HEAPU8.set(new Uint8Array(64).fill(0), 64);
  const old = new Uint8Array(64);
  old.set([104, 101, 108, 108, 111, 0], 8);
  heap.HEAPU8.set(old, 0);
  assert.equal(readCString(heap, 8), "hello");
  // "é" is two bytes: with room for 3 bytes only "aé" fits, never half a character
  assert.equal(writeCString(heap, 70, 4, "aéé"), 3);
  assert.equal(readCString(heap, 70), "aé");
  assert.equal(readCString(heap, 0 /* NULL */), "");
  assert.equal(writeCString(heap, 0, 10, "x"), 0);
});

// ---- the whole path through Pyodide ------------------------------------------

interface PyodideApi extends ClibPyodide {
  _module: ClibModule;
  runPython(code: string): unknown;
  globals: { get(name: string): unknown };
}

/** The C side module's bytes; built on demand when missing. */
function libBytes(): Uint8Array {
  return new Uint8Array(readFileSync(wasmBuildOutput("wasm/build/libwebdlpack.so")));
}

async function startPyodide(): Promise<PyodideApi> {
  const url = pathToFileURL(join(ROOT, "node_modules/pyodide/pyodide.mjs")).href;
  const mod = (await import(url)) as { loadPyodide(o: { indexURL: string }): Promise<PyodideApi> };
  return mod.loadPyodide({ indexURL: join(ROOT, "node_modules/pyodide") + "/" });
}

const PY_SETUP = `
import ctypes
from ctypes import c_int, c_int32, c_uint32, c_uint64, c_void_p, c_char_p, c_int64, c_uint8, c_uint16

class Info(ctypes.Structure):
    _fields_ = [("nbytes", c_uint64), ("allocated_nbytes", c_uint64), ("device_id", c_int32),
                ("usage", c_uint32), ("owned", c_uint32), ("reserved", c_uint32)]

class DType(ctypes.Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]

lib = ctypes.CDLL("/lib/libwebdlpack.so")
lib.wdl_webgpu_alloc.restype = c_uint32
lib.wdl_webgpu_alloc.argtypes = [c_int32, c_uint64, c_uint32]
lib.wdl_webgpu_free.argtypes = [c_uint32]
lib.wdl_webgpu_query.argtypes = [c_uint32, ctypes.POINTER(Info)]
lib.wdl_last_error_message.restype = c_char_p
lib.wdl_managed_tensor_alloc_cpu_p.restype = c_void_p
lib.wdl_managed_tensor_alloc_cpu_p.argtypes = [ctypes.POINTER(DType), c_int32, ctypes.POINTER(c_int64)]
lib.wdl_managed_tensor_release.argtypes = [c_void_p]
lib.wdl_tensor_to_js.argtypes = [c_void_p]
lib.wdl_tensor_from_js.restype = c_void_p
lib.wdl_tensor_from_js.argtypes = [c_int32]

def last():
    return (lib.wdl_last_error_code(), lib.wdl_last_error_message().decode())
`;

// One Pyodide and one context for the tests below, which run in order (each a
// top-level test, so every one is counted once in the JUnit results).
let py!: PyodideApi;
let ctx!: PageContext;
let lib!: WebDLPackCLib;

/** Run Python code in `py`; a PyProxy result comes back converted with toJs(). */
function run<T>(code: string): T {
  const r = py.runPython(code) as { toJs?: () => unknown } | T;
  return (typeof r === "object" && r !== null && "toJs" in r && typeof r.toJs === "function" ? r.toJs() : r) as T;
}

before(async () => {
  py = await startPyodide();
  ctx = new PageContext(CONTEXT_PROTOCOL);
  await ctx.setup({ gpu: asGPU<GPU>(new FakeGPU()) });
});

test("C library in Pyodide: bad inputs refuse before anything is loaded", async () => {
  // Nothing given and nothing at path: the shipped side module — here from an assetBase where it is not.
  await assert.rejects(
    loadWebDLPackC(py, { path: "/lib/nothing-here.so", assetBase: "file:///nonexistent-webdlpack-assets/" }),
    isCode("INVALID_ARGUMENT", /wasm\/libwebdlpack\.so.*field assetBase/),
  );
  await assert.rejects(
    loadWebDLPackC(py, { bytes: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]) }),
    isCode("INVALID_ARGUMENT", /not a wasm module/),
  );
  await assert.rejects(
    loadWebDLPackC({ _module: {}, version: "314.0.7" } as unknown as ClibPyodide, { bytes: libBytes() }),
    isCode("UNSUPPORTED", /dynamic loader/),
  );
  await assert.rejects(
    loadWebDLPackC(py, { bytes: libBytes(), owner: "" }),
    isCode("INVALID_ARGUMENT", /options\.owner/),
  );
});

test("C library in Pyodide: loads once; Python's ctypes.CDLL gets the same instance", async () => {
  lib = await loadWebDLPackC(py, { bytes: libBytes(), context: () => ctx });
  assert.deepEqual(lib.version, { major: 0, minor: 1 });
  assert.equal(await loadWebDLPackC(py, { bytes: libBytes() }), lib, "cached per Pyodide");
  run(PY_SETUP);
  assert.equal(run<number>("lib.wdl_is_initialized()"), 1, "the host table JS installed is visible from Python");
});

test("C library in Pyodide: Python allocates a WebGPU buffer; JS sees it in the pointer table; free makes it stale", () => {
  const [ptr, code] = run<[number, number]>("p = lib.wdl_webgpu_alloc(0, 1000, 0); (p, lib.wdl_last_error_code())");
  assert.ok(ptr > 0, `alloc failed: code ${code}`);
  const info = ctx.gpuPointerInfo(ptr);
  assert.equal(info.owner, "c");
  assert.equal(info.size, 1024, "the context's bucket size class");
  assert.equal(info.requestedSize, 1000);
  assert.equal(info.owned, true);
  assert.equal(ctx.gpuPointerToBuffer(ptr).size, 1024);
  const q = run<number[]>(
    "i = Info(); rc = lib.wdl_webgpu_query(p, ctypes.byref(i)); [rc, i.nbytes, i.allocated_nbytes, i.device_id, i.usage, i.owned]",
  );
  assert.deepEqual(q, [0, 1000, 1024, 0, 0x8c, 1]);
  // One ledger: C's allocation is a gpu-buffer entry of owner "c", counted in the per-owner stats.
  const entry = ctx.ledger.entries().find((e) => e.pointer === ptr);
  assert.deepEqual(entry && { kind: entry.kind, owner: entry.owner, deviceId: entry.deviceId, bytes: entry.bytes }, {
    kind: "gpu-buffer",
    owner: "c",
    deviceId: 0,
    bytes: 1024,
  });
  assert.deepEqual(
    ctx.stats().owners.find((o) => o.owner === "c"),
    { owner: "c", deviceId: 0, livePointers: 1, liveBytes: 1024, hits: 0, misses: 1 },
  );
  assert.deepEqual(lib.gpuStats(), { liveCount: 1, liveBytes: 1000 });
  assert.equal(run<number>("lib.wdl_webgpu_free(p)"), 0);
  assert.throws(() => ctx.gpuPointerInfo(ptr), isCode("STALE_POINTER"));
  assert.equal(
    ctx.ledger.entries().some((e) => e.pointer === ptr),
    false,
    "the ledger entry went with the free",
  );
  assert.equal(ctx.stats().cachedBuffers, 1, "freed through the context: the buffer went back to its cache");
  assert.deepEqual(lib.gpuStats(), { liveCount: 0, liveBytes: 0 });
  const again = run<[number, [number, string]]>("(lib.wdl_webgpu_free(p), last())");
  assert.equal(again[0], -1);
  assert.equal(again[1][0], ErrorCode.DOUBLE_FREE);
  assert.match(again[1][1], /already freed/);
});

test("C library in Pyodide: a context error reaches Python with its code and message", () => {
  const [ptr, [code, msg]] = run<[number, [number, string]]>("(lib.wdl_webgpu_alloc(7, 64, 0), last())");
  assert.equal(ptr, 0);
  assert.equal(code, ErrorCode.UNKNOWN_DEVICE);
  assert.match(msg, /^\[UNKNOWN_DEVICE\]/);
  const [p2, [c2, m2]] = run<[number, [number, string]]>("(lib.wdl_webgpu_alloc(0, 1 << 40, 0), last())");
  assert.equal(p2, 0);
  assert.equal(c2, ErrorCode.INVALID_ARGUMENT);
  assert.match(m2, /maxBufferSize/);
});

test("C library in Pyodide: lib.check turns C failures into typed errors", () => {
  assert.throws(
    () => lib.check(lib.exports.wdl_webgpu_free(12345), "wdl_webgpu_free"),
    isCode(
      "INVALID_POINTER",
      /wdl_webgpu_free: GPU pointer was not allocated by wdl_webgpu_alloc; field ptr; value 0x00003039/,
    ),
  );
  lib.exports.wdl_clear_error();
  assert.equal(lib.lastError(), undefined);
  // Pointer/handle results fail only with 0: 0xFFFFFFFF (a valid GPU pointer) arrives from C as -1.
  assert.equal(lib.check(-1, "wdl_webgpu_alloc", true), -1);
  assert.throws(
    () => lib.check(0, "wdl_webgpu_alloc", true),
    (e: unknown) => e instanceof Error,
  );
});

test("C library in Pyodide: tensor from Python's C to JS and back, deleter once", () => {
  const live0 = lib.exports.wdl_managed_tensor_live_count();
  const handle = run<number>(`
shape = (c_int64 * 2)(2, 3)
dt = DType(2, 32, 1)
t = lib.wdl_managed_tensor_alloc_cpu_p(ctypes.byref(dt), 2, shape)
lib.wdl_tensor_to_js(t)`);
  assert.ok(handle > 0);
  assert.equal(lib.handles.size, 1);
  const addr = lib.takeTensor(handle);
  assert.equal(addr, run<number>("t"));
  const view = new DataView(py._module.HEAPU8.buffer);
  assert.equal(view.getUint32(addr, true), 1, "version.major");
  const shapePtr = view.getUint32(addr + 24 + 20, true);
  assert.equal(view.getBigInt64(shapePtr + 8, true), 3n);
  // JS hands it back: Python takes it with wdl_tensor_from_js and releases it
  const h2 = lib.publishTensor(addr);
  const back = run<number>(`t2 = lib.wdl_tensor_from_js(${h2}); t2`);
  assert.equal(back, addr);
  assert.equal(run<number>(`lib.wdl_tensor_from_js(${h2}) or last()[0]`), ErrorCode.ALREADY_CONSUMED);
  run("lib.wdl_managed_tensor_release(t2)");
  assert.equal(lib.exports.wdl_managed_tensor_live_count(), live0);
});

test("C library in Pyodide: host writes survive memory growth", () => {
  const before = py._module.HEAPU8.buffer;
  const heap = moduleAllocator(py._module);
  const big = heap.malloc(128 << 20); // grows linear memory: old views detach
  assert.ok(big !== 0);
  assert.notEqual(py._module.HEAPU8.buffer, before, "memory grew");
  const q = run<number[]>(
    "p = lib.wdl_webgpu_alloc(0, 48, 0); i = Info(); [lib.wdl_webgpu_query(p, ctypes.byref(i)), i.nbytes, lib.wdl_webgpu_free(p)]",
  );
  heap.free(big);
  assert.deepEqual(q, [0, 48, 0]);
});

test("C library in Pyodide: dispose: shutdown, untaken tensors released, a new load re-initialises", async () => {
  const live0 = lib.exports.wdl_managed_tensor_live_count();
  const h = run<number>(
    "t3 = lib.wdl_managed_tensor_alloc_cpu_p(ctypes.byref(dt), 2, shape); lib.wdl_tensor_to_js(t3)",
  );
  assert.ok(h > 0);
  lib.dispose();
  lib.dispose(); // twice is fine
  assert.equal(lib.exports.wdl_managed_tensor_live_count(), live0, "the untaken tensor was released");
  assert.equal(run<number>("lib.wdl_is_initialized()"), 0);
  const [p, code] = run<[number, number]>("(lib.wdl_webgpu_alloc(0, 16, 0), lib.wdl_last_error_code())");
  assert.equal(p, 0);
  assert.equal(code, ErrorCode.UNSUPPORTED);
  const lib2 = await loadWebDLPackC(py, { context: () => ctx }); // file already in place
  assert.notEqual(lib2, lib);
  assert.equal(run<number>("lib.wdl_is_initialized()"), 1);
  lib2.dispose();
});
