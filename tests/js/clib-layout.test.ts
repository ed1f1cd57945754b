/**
 * Layout and ABI conformance of the C library against the JS side:
 *   - build/layout/wasm32.json (offsets emcc computed, see wasm/tools/layout_probe.c)
 *     equals LAYOUT (js/src/dlpack/layout.ts) struct by struct, key by key,
 *     and the clib structs in js/src/bridge/clib/abi.ts;
 *   - the wdl_error_code enum in webdlpack.h equals ErrorCode in js/src/errors.ts
 *     (both parsed from source, in both directions);
 *   - the WDL_EXPORT functions of webdlpack.h are exactly CLIB_EXPORT_NAMES and
 *     the built side module exports every one of them;
 *   - the host-table function fields in the header are HOST_SIGNATURES' keys, and
 *     each signature's arity matches the C prototype.
 * Key names are the same on all sides (C field names), so no mapping is needed.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import {
  CLIB_EXPORT_NAMES,
  CLIB_VERSION,
  GPU_BUFFER_INFO_LAYOUT,
  HOST_SIGNATURES,
  HOST_TABLE_LAYOUT,
  HOST_TABLE_VERSION,
  WEBGPU_STATS_LAYOUT,
} from "../../js/src/bridge/clib/index.js";
import { LAYOUT } from "../../js/src/dlpack/layout.js";
import { ErrorCode } from "../../js/src/errors.js";
import { repoRoot, wasmBuildOutput } from "./helpers.js";

const ROOT = repoRoot();
const HEADER = readFileSync(join(ROOT, "wasm/include/webdlpack/webdlpack.h"), "utf8");
/** What the JS host provides (the host table), included by webdlpack.h. */
const HOST_HEADER = readFileSync(join(ROOT, "wasm/include/webdlpack/host.h"), "utf8");
const ERRORS_TS = readFileSync(join(ROOT, "js/src/errors.ts"), "utf8");

/** The emcc layout JSON; built on demand (make -f wasm/wasm.mk) when missing. */
function wasmLayout(): Record<string, Record<string, number>> {
  return JSON.parse(readFileSync(wasmBuildOutput("build/layout/wasm32.json"), "utf8")) as Record<
    string,
    Record<string, number>
  >;
}

/** The built C side module's path; built on demand when missing. */
function sideModule(): string {
  return wasmBuildOutput("wasm/build/libwebdlpack.so");
}

/** A plain copy of a frozen layout object (for deepEqual against parsed JSON). */
function plain(o: object): Record<string, number> {
  return { ...(o as Record<string, number>) };
}

const DLPACK_STRUCTS = [
  "DLPackVersion",
  "DLDevice",
  "DLDataType",
  "DLTensor",
  "DLManagedTensor",
  "DLManagedTensorVersioned",
] as const;

test("emcc layout of every DLPack struct equals LAYOUT key by key", () => {
  const wasm = wasmLayout();
  for (const name of DLPACK_STRUCTS) {
    assert.ok(wasm[name], `wasm32.json lacks ${name}`);
    assert.deepEqual(wasm[name], plain(LAYOUT[name]), `${name}: emcc vs js/src/dlpack/layout.ts`);
  }
  assert.deepEqual(
    Object.keys(LAYOUT).sort(),
    [...DLPACK_STRUCTS].sort(),
    "LAYOUT describes exactly the DLPack structs",
  );
});

test("the header's documented wasm32 numbers hold in the emcc build", () => {
  const wasm = wasmLayout();
  assert.equal(wasm.DLTensor?.size, 40);
  assert.equal(wasm.DLTensor?.byte_offset, 32);
  assert.equal(wasm.DLManagedTensor?.size, 48);
  assert.equal(wasm.DLManagedTensorVersioned?.size, 64);
  assert.equal(wasm.DLManagedTensorVersioned?.dl_tensor, 24);
});

test("emcc layout of the clib structs equals abi.ts", () => {
  const wasm = wasmLayout();
  assert.deepEqual(wasm.wdl_host_table, plain(HOST_TABLE_LAYOUT));
  assert.deepEqual(wasm.wdl_gpu_buffer_info, plain(GPU_BUFFER_INFO_LAYOUT));
  assert.deepEqual(wasm.wdl_webgpu_stats, plain(WEBGPU_STATS_LAYOUT));
});

test("wdl_error_code in webdlpack.h equals ErrorCode in errors.ts (parsed from both files)", () => {
  const enumBody = /typedef enum wdl_error_code \{([\s\S]*?)\} wdl_error_code;/.exec(HEADER);
  assert.ok(enumBody, "wdl_error_code enum not found in webdlpack.h");
  const fromC = new Map<string, number>();
  for (const m of enumBody[1]!.matchAll(/\bWDL_([A-Z_]+)\s*=\s*(\d+)\s*,/g)) fromC.set(m[1]!, Number(m[2]));
  const objBody = /export const ErrorCode = \{([\s\S]*?)\} as const;/.exec(ERRORS_TS);
  assert.ok(objBody, "ErrorCode object not found in errors.ts");
  const fromTs = new Map<string, number>();
  for (const m of objBody[1]!.matchAll(/\b([A-Z_]+):\s*(\d+)\s*,/g)) fromTs.set(m[1]!, Number(m[2]));
  assert.ok(fromC.size >= 26, `parsed ${fromC.size} C codes`);
  assert.deepEqual([...fromC.entries()].sort(), [...fromTs.entries()].sort());
  // and the parsed TS numbers are the ones the running module has
  for (const [name, num] of fromTs) assert.equal((ErrorCode as Record<string, number>)[name], num, name);
});

test("WDL_EXPORT functions of the header are exactly CLIB_EXPORT_NAMES", () => {
  const declared = new Set<string>();
  for (const m of HEADER.matchAll(/^WDL_EXPORT\s+[^(]*?\b(wdl_[a-z0-9_]+)\s*\(/gm)) declared.add(m[1]!);
  assert.deepEqual([...declared].sort(), [...CLIB_EXPORT_NAMES].sort());
});

test("the built side module exports every entry point and nothing internal", () => {
  const module = new WebAssembly.Module(readFileSync(sideModule()));
  const exported = new Set(
    WebAssembly.Module.exports(module)
      .filter((e) => e.kind === "function")
      .map((e) => e.name),
  );
  for (const name of CLIB_EXPORT_NAMES) assert.ok(exported.has(name), `libwebdlpack.so lacks ${name}`);
  const internal = [...exported].filter((n) => n.startsWith("wdl__"));
  assert.deepEqual(internal, [], "internal helpers must not be exported");
  const needs = new Set(WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}`));
  assert.ok(needs.has("env.memory"), "a side module imports the main module's memory");
});

test("host-table entries in the header match HOST_SIGNATURES (names, order, arity)", () => {
  const body = /typedef struct wdl_host_table \{([\s\S]*?)\} wdl_host_table;/.exec(HOST_HEADER);
  assert.ok(body, "wdl_host_table not found");
  const entries: [string, number][] = [];
  for (const m of body[1]!.matchAll(/\(\*([a-z_]+)\)\(([^)]*)\)/g)) {
    const args = m[2]!.trim();
    entries.push([m[1]!, args === "void" || args === "" ? 0 : args.split(",").length]);
  }
  assert.deepEqual(
    entries.map(([n]) => n),
    Object.keys(HOST_SIGNATURES),
  );
  for (const [name, arity] of entries) {
    const sig = HOST_SIGNATURES[name as keyof typeof HOST_SIGNATURES];
    assert.equal(sig.length - 1, arity, `${name}: signature ${sig} vs ${arity} C arguments`);
    assert.match(sig, /^i+$/, `${name}: every argument and result is i32`);
  }
  // offsets follow the declaration order: two u32 header fields, then one 4-byte pointer each
  entries.forEach(([name], i) =>
    assert.equal(HOST_TABLE_LAYOUT[name as keyof typeof HOST_TABLE_LAYOUT], 8 + 4 * i, name),
  );
});

test("version macros in the header equal the TS mirror", () => {
  const major = /#define WEBDLPACK_VERSION_MAJOR (\d+)/.exec(HEADER);
  const minor = /#define WEBDLPACK_VERSION_MINOR (\d+)/.exec(HEADER);
  const table = /#define WDL_HOST_TABLE_VERSION (\d+)/.exec(HOST_HEADER);
  assert.equal(Number(major?.[1]), CLIB_VERSION.major);
  assert.equal(Number(minor?.[1]), CLIB_VERSION.minor);
  assert.equal(Number(table?.[1]), HOST_TABLE_VERSION);
});
