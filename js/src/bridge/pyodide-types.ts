/**
 * The small part of Pyodide's API that webdlpack uses, typed structurally so
 * webdlpack does not depend on the `pyodide` package at build time.
 */
import type { EmscriptenModuleLike } from "../dlpack/wasm-host.js";

/**
 * Emscripten module internals that Pyodide exposes as `pyodide._module`: the
 * members {@link emscriptenHost} uses (heap, malloc/free, function table), with
 * the table always present, plus the file system and side-module loader.
 */
export interface PyodideModuleLike extends EmscriptenModuleLike {
  /** The indirect function table (Pyodide always exports it). */
  wasmTable: WebAssembly.Table;
  /** The parts of Emscripten's FS that install files. */
  FS: {
    mkdirTree(path: string): void;
    writeFile(path: string, data: Uint8Array): void;
  };
  /** Emscripten's side-module loader (`dlopen` from JS). */
  loadDynamicLibrary?(path: string, flags?: Record<string, unknown>): Promise<unknown> | unknown;
}

/** A Python object proxied into JS. */
export interface PyProxyLike {
  destroy(): void;
  [key: string]: unknown;
}

/** The Pyodide API object returned by `loadPyodide()`. */
export interface PyodideLike {
  _module: PyodideModuleLike;
  version: string;
  runPython(code: string, options?: { globals?: unknown }): unknown;
  runPythonAsync(code: string, options?: { globals?: unknown }): Promise<unknown>;
  loadPackage(names: string | string[], options?: Record<string, unknown>): Promise<unknown>;
  registerJsModule(name: string, module: object): void;
  pyimport(name: string): PyProxyLike;
  globals: { get(name: string): unknown; set(name: string, value: unknown): void };
}
