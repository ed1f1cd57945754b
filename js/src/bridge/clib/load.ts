/**
 * Load the webdlpack C library (side module `libwebdlpack.so`) into a running
 * Pyodide and connect it to the page-wide WebDLPackContext.
 *
 * Order: write the module into Pyodide's file system → load it with
 * Emscripten's dynamic loader (global, never unloaded) → build the host table
 * with `addFunction` → `wdl_init`. Emscripten's loader keeps one instance per
 * path (`LDSO.loadedLibsByName`), so Python's `ctypes.CDLL(path)` afterwards
 * gets this same instance — same globals, same host table.
 */
import { loadAssetBytes, type AssetOptions } from "../../assets.js";
import { checkOptions, FUNCTION_OPTION, URL_OPTION, type OptionRule } from "../../arguments.js";
import { getContext, type WebDLPackContext } from "../../context/index.js";
import { clibTransfers, type ClibTransfers } from "./transfers.js";
import { WebDLPackError } from "../../errors.js";
import {
  CLIB_EXPORT_NAMES,
  CLIB_MESSAGE_CAP,
  CLIB_VERSION,
  HOST_SIGNATURES,
  HOST_TABLE_LAYOUT,
  HOST_TABLE_VERSION,
  WEBGPU_STATS_LAYOUT,
  type HostEntryName,
  type WebDLPackCExports,
} from "./abi.js";
import { moduleAllocator, type AllocatorSource } from "../../dlpack/module-allocator.js";
import { errorFromC } from "./errors.js";
import { TensorHandleTable } from "./handles.js";
import { makeHostFunctions } from "./host.js";
import { heapView, readCString, type HeapSource } from "./memory.js";
import { checkPyodideInstance } from "../pyodide-instance.js";
import { checkPyodideVersion } from "../pyodide-version.js";
import "../../dispose-symbol.js"; // Symbol.dispose in the published .d.ts without lib esnext.disposable

/** Default place of the side module in Pyodide's file system. */
export const CLIB_DEFAULT_PATH = "/lib/libwebdlpack.so";

/** Pyodide's (Emscripten's) file system, as far as the loader uses it. */
export interface ClibFS {
  mkdirTree(path: string): void;
  writeFile(path: string, data: Uint8Array): void;
  analyzePath?(path: string): { exists: boolean };
}

/** The Emscripten module internals the loader uses (`pyodide._module`). */
export interface ClibModule extends HeapSource, AllocatorSource {
  addFunction(fn: (...args: number[]) => number, signature: string): number;
  removeFunction(index: number): void;
  loadDynamicLibrary?(path: string, flags?: Record<string, unknown>): unknown;
  LDSO?: { loadedLibsByName: Record<string, { exports: Record<string, unknown> } | undefined> };
  FS?: ClibFS;
}

/**
 * The Pyodide API object, as far as the loader uses it. `_module` (Pyodide's Emscripten module, which
 * Pyodide's own types leave out as private) is checked at run time, so `loadPyodide()`'s result is accepted as typed.
 */
export interface ClibPyodide {
  /** `pyodide.version`, checked against the supported range (bridge/pyodide-version.ts). */
  version?: string;
  _module?: ClibModule;
  FS?: ClibFS;
}

/**
 * Options of {@link loadWebDLPackC}. Give `url` or `bytes`, or neither: then the file already at
 * `path` is loaded, else the side module shipped with the package, found as assets.ts says
 * (`assetBase`, next to webdlpack's module, or the embedded copy): no option is needed after bundling.
 */
export interface LoadWebDLPackCOptions extends AssetOptions {
  /** Where to fetch `libwebdlpack.so` from. */
  url?: string | URL;
  /** The side module's bytes. */
  bytes?: Uint8Array | ArrayBuffer;
  /** Path in Pyodide's FS (default {@link CLIB_DEFAULT_PATH}); Python opens the same path with ctypes.CDLL. */
  path?: string;
  /** The context C talks to (default: `getContext()`, read on every call). */
  context?: () => WebDLPackContext;
  /** Reports a GPU allocation that WebGPU rejected after C already got its pointer (default: console.error). */
  onAsyncGpuError?: (error: WebDLPackError, ptr: number) => void;
  /** Owner name of C's GPU allocations in the context's stats and ledger (default `"c"`). */
  owner?: string;
}

/** Live GPU pointers the C library allocated (its own ledger). */
export interface ClibGpuStats {
  /** Number of live pointers. */
  liveCount: number;
  /** Sum of their requested sizes in bytes. */
  liveBytes: number;
}

/** A loaded, initialised C library; `upload` / `readback` move bytes between C memory and GPU pointers (transfers.ts). */
export interface WebDLPackCLib extends ClibTransfers {
  /** Path of the module in Pyodide's FS (pass it to `ctypes.CDLL`). */
  readonly path: string;
  /** The C entry points (raw: addresses come back signed, apply `>>> 0`). */
  readonly exports: WebDLPackCExports;
  /** Library version as { major, minor }. */
  readonly version: { major: number; minor: number };
  /** Tensors in flight between C and JS (`tensor_to_js` / `tensor_from_js`). */
  readonly handles: TensorHandleTable;
  /** C's last error as a WebDLPackError, or undefined when it is OK. */
  lastError(where?: string): WebDLPackError | undefined;
  /** Throw C's last error if `rc` is -1 (0/-1 int results) or, with `zeroIsError`, 0 (pointer/handle results; -1 is then a valid u32). */
  check(rc: number, where: string, zeroIsError?: boolean): number;
  /** Take a tensor C handed over with `wdl_tensor_to_js`; JS now owns the address (call {@link releaseTensor}). */
  takeTensor(handle: number): number;
  /** Publish a managed tensor for C's `wdl_tensor_from_js`; returns the handle. JS gives up ownership once C takes it. */
  publishTensor(address: number): number;
  /** Call a managed tensor's deleter once (through `wdl_managed_tensor_release`). */
  releaseTensor(address: number): void;
  /** C's GPU pointer ledger. */
  gpuStats(): ClibGpuStats;
  /** Detach: `wdl_shutdown`, release untaken tensors, remove the host functions. Safe to call twice. */
  dispose(): void;
  /** Same as {@link dispose}, for `using`. */
  [Symbol.dispose](): void;
}

const instances = new WeakMap<object, WebDLPackCLib>();

function isWasm(bytes: Uint8Array): boolean {
  return bytes.length >= 8 && bytes[0] === 0 && bytes[1] === 0x61 && bytes[2] === 0x73 && bytes[3] === 0x6d;
}

async function moduleBytes(options: LoadWebDLPackCOptions): Promise<Uint8Array | undefined> {
  if (options.bytes !== undefined) {
    const b = options.bytes instanceof Uint8Array ? options.bytes : new Uint8Array(options.bytes);
    return b;
  }
  if (options.url === undefined) return undefined;
  const url = String(options.url);
  let response: Response;
  try {
    response = await fetch(url);
  } catch (err) {
    throw new WebDLPackError("INVALID_ARGUMENT", "cannot fetch the C library", {
      field: "options.url",
      value: url,
      expected: "a reachable URL of libwebdlpack.so",
      cause: err,
    });
  }
  if (!response.ok) {
    throw new WebDLPackError("INVALID_ARGUMENT", `fetching the C library failed with HTTP ${response.status}`, {
      field: "options.url",
      value: url,
      expected: "a URL answering 200 with libwebdlpack.so",
    });
  }
  return new Uint8Array(await response.arrayBuffer());
}

function dirname(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? "/" : path.slice(0, i);
}

/** The members of the Pyodide object the loader reads (the rest is checked as UNSUPPORTED). */
const CLIB_PYODIDE_MEMBERS = ["_module", "version"] as const;

/** A rule accepting a non-empty string. */
const nonEmptyString = (expected: string): OptionRule => ({
  accepts: (v) => typeof v === "string" && v !== "",
  expected,
});

/** The options {@link loadWebDLPackC} knows, and what each accepts. */
const LOAD_C_OPTION_RULES: Readonly<Record<keyof LoadWebDLPackCOptions, OptionRule>> = {
  url: URL_OPTION,
  bytes: {
    accepts: (v) => v instanceof Uint8Array || v instanceof ArrayBuffer,
    expected: "a Uint8Array or ArrayBuffer of libwebdlpack.so",
  },
  path: nonEmptyString("a non-empty path in Pyodide's file system"),
  context: FUNCTION_OPTION,
  onAsyncGpuError: FUNCTION_OPTION,
  owner: nonEmptyString("a non-empty string naming C's allocations"),
  assetBase: URL_OPTION,
};

/**
 * Load `libwebdlpack.so` into `pyodide` and initialise it with a host table
 * that forwards to the WebDLPackContext. Returns the same instance for the
 * same Pyodide until it is disposed.
 *
 * Throws INVALID_ARGUMENT (`pyodide` is not a Pyodide instance, an option is
 * unknown or of the wrong kind, fetch failure, the shipped side module not found,
 * not a wasm module), UNSUPPORTED (a Pyodide version outside the supported range,
 * the runtime lacks `loadDynamicLibrary` /
 * `LDSO`, or an export is missing), VERSION_MISMATCH (library major differs),
 * or the error `wdl_init` reports.
 */
export async function loadWebDLPackC(
  pyodide: ClibPyodide,
  options: LoadWebDLPackCOptions = {},
): Promise<WebDLPackCLib> {
  checkPyodideInstance<ClibPyodide & { _module: ClibModule }>(pyodide, CLIB_PYODIDE_MEMBERS, "loadWebDLPackC");
  checkPyodideVersion(pyodide.version, "loadWebDLPackC");
  checkOptions(options, "loadWebDLPackC", LOAD_C_OPTION_RULES);
  const existing = instances.get(pyodide);
  if (existing !== undefined) return existing;
  const m = pyodide._module;
  const fs = pyodide.FS ?? m.FS;
  const path = options.path ?? CLIB_DEFAULT_PATH;
  if (typeof m?.loadDynamicLibrary !== "function" || m.LDSO === undefined || fs === undefined) {
    throw new WebDLPackError("UNSUPPORTED", "this Pyodide does not expose its dynamic loader", {
      field: "pyodide._module.loadDynamicLibrary / LDSO / FS",
      value: typeof m?.loadDynamicLibrary,
      expected: "a Pyodide (Emscripten MAIN_MODULE) runtime",
    });
  }
  const bytes = await moduleBytes(options);
  if (bytes !== undefined) {
    if (!isWasm(bytes)) {
      throw new WebDLPackError("INVALID_ARGUMENT", "the C library is not a wasm module", {
        field: options.bytes !== undefined ? "options.bytes" : "options.url",
        value: `${bytes.length} bytes starting ${Array.from(bytes.subarray(0, 4), (x) => x.toString(16)).join(" ")}`,
        expected: "a wasm side module (\\0asm)",
      });
    }
    if (m.LDSO.loadedLibsByName[path] === undefined) {
      fs.mkdirTree(dirname(path));
      fs.writeFile(path, bytes);
    }
  } else if (m.LDSO.loadedLibsByName[path] === undefined && !(fs.analyzePath?.(path).exists ?? false)) {
    // Nothing given and nothing at `path`: the side module shipped with the package (assets.ts).
    const shipped = await loadAssetBytes(
      "clib",
      options.assetBase !== undefined ? { assetBase: options.assetBase } : {},
    );
    fs.mkdirTree(dirname(path));
    fs.writeFile(path, shipped.bytes);
  }
  // `fs`: the Emscripten of Pyodide before 314 reads a library from the file system only when given it (else it
  // fetches the path, which Pyodide refuses: "Didn't expect to load any more file_packager files!"); later ones ignore it.
  await m.loadDynamicLibrary(path, { loadAsync: true, global: true, nodelete: true, fs });
  const dso = m.LDSO.loadedLibsByName[path];
  const missing = CLIB_EXPORT_NAMES.filter((name) => typeof dso?.exports[name] !== "function");
  if (dso === undefined || missing.length > 0) {
    throw new WebDLPackError("UNSUPPORTED", "the loaded module is not the webdlpack C library", {
      field: "exports",
      value: missing.join(", "),
      expected: "every wdl_* entry point of webdlpack.h",
    });
  }
  const exports = dso.exports as unknown as WebDLPackCExports;
  const packed = exports.wdl_version() >>> 0;
  const version = { major: packed >>> 16, minor: packed & 0xffff };
  if (version.major !== CLIB_VERSION.major) {
    throw new WebDLPackError("VERSION_MISMATCH", "C library major version differs from this glue", {
      field: "wdl_version()",
      value: `${version.major}.${version.minor}`,
      expected: `${CLIB_VERSION.major}.x`,
    });
  }
  const lib = connect(m, path, exports, version, options);
  instances.set(pyodide, lib);
  const dispose = lib.dispose.bind(lib);
  lib.dispose = () => {
    if (instances.get(pyodide) === lib) instances.delete(pyodide);
    dispose();
  };
  return lib;
}

function connect(
  m: ClibModule,
  path: string,
  exports: WebDLPackCExports,
  version: { major: number; minor: number },
  options: LoadWebDLPackCOptions,
): WebDLPackCLib & { dispose(): void } {
  const handles = new TensorHandleTable();
  const { malloc, free } = moduleAllocator(m, "pyodide._module._malloc");
  const host = makeHostFunctions({
    ...(options.owner !== undefined ? { owner: options.owner } : {}),
    context: options.context ?? getContext,
    heap: m,
    handles,
    onAsyncGpuError: options.onAsyncGpuError ?? ((error, ptr) => console.error(`webdlpack C pointer ${ptr}:`, error)),
  });
  const indices: number[] = [];
  const table = malloc(HOST_TABLE_LAYOUT.size);
  try {
    if (table === 0)
      throw new WebDLPackError("OUT_OF_MEMORY", "malloc failed for the host table", {
        field: "wdl_host_table",
        value: HOST_TABLE_LAYOUT.size,
        expected: "malloc to return a non-zero address",
      });
    const view = heapView(m);
    view.setUint32(table + HOST_TABLE_LAYOUT.abi_version, HOST_TABLE_VERSION, true);
    view.setUint32(table + HOST_TABLE_LAYOUT.struct_size, HOST_TABLE_LAYOUT.size, true);
    for (const name of Object.keys(HOST_SIGNATURES) as HostEntryName[]) {
      const fn = host[name] as (...args: number[]) => number;
      const index = m.addFunction(fn, HOST_SIGNATURES[name]) >>> 0;
      indices.push(index);
      heapView(m).setUint32(table + HOST_TABLE_LAYOUT[name], index, true);
    }
    if (exports.wdl_init(table) !== 0) {
      throw errorFromC(
        exports.wdl_last_error_code(),
        readCString(m, exports.wdl_last_error_message(), CLIB_MESSAGE_CAP),
        "wdl_init",
      );
    }
  } catch (err) {
    for (const index of indices) m.removeFunction(index);
    throw err;
  } finally {
    if (table !== 0) free(table);
  }

  let disposed = false;
  const lastError = (where = "webdlpack C"): WebDLPackError | undefined => {
    const code = exports.wdl_last_error_code();
    if (code === 0) return undefined;
    return errorFromC(code, readCString(m, exports.wdl_last_error_message(), CLIB_MESSAGE_CAP), where);
  };
  const lib = {
    ...clibTransfers(m, options.context ?? getContext),
    path,
    exports,
    version,
    handles,
    lastError,
    check(rc: number, where: string, zeroIsError = false): number {
      // Pointer/handle results fail only with 0: a u32 GPU pointer such as 0xFFFFFFFF arrives as -1 and is valid.
      if (zeroIsError ? rc === 0 : rc === -1) {
        throw (
          lastError(where) ??
          new WebDLPackError("GPU_ERROR", `${where} failed without setting an error`, {
            field: where,
            value: rc,
            expected: "a return code with wdl_last_error set",
          })
        );
      }
      return rc;
    },
    takeTensor: (handle: number) => handles.take(handle),
    publishTensor: (address: number) => handles.put(address),
    releaseTensor(address: number): void {
      exports.wdl_managed_tensor_release(address >>> 0);
    },
    gpuStats(): ClibGpuStats {
      const out = malloc(WEBGPU_STATS_LAYOUT.size);
      if (out === 0)
        throw new WebDLPackError("OUT_OF_MEMORY", "malloc failed for wdl_webgpu_stats", {
          field: "wdl_webgpu_stats",
          value: WEBGPU_STATS_LAYOUT.size,
          expected: "malloc to return a non-zero address",
        });
      try {
        lib.check(exports.wdl_webgpu_stats_get(out), "wdl_webgpu_stats_get");
        const view = heapView(m);
        return {
          liveCount: view.getUint32(out + WEBGPU_STATS_LAYOUT.live_count, true),
          liveBytes: Number(view.getBigUint64(out + WEBGPU_STATS_LAYOUT.live_bytes, true)),
        };
      } finally {
        free(out);
      }
    },
    dispose(): void {
      if (disposed) return;
      disposed = true;
      // Tensors C published that JS never took are released first, while the host table is still installed:
      // their release callbacks may free GPU buffers (wdl_webgpu_free needs the host).
      for (const address of handles.drain()) exports.wdl_managed_tensor_release(address);
      exports.wdl_shutdown();
      for (const index of indices) m.removeFunction(index);
    },
    [Symbol.dispose](): void {
      lib.dispose();
    },
  };
  return lib;
}
