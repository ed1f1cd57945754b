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

/**
 * The Pyodide API object returned by `loadPyodide()`, as its own types declare it (the `pyodide` package's
 * `PyodideAPI` is accepted as it is). webdlpack also needs Pyodide's Emscripten module, `pyodide._module`,
 * which those types leave out as private: it is checked at run time ({@link PyodideWithModule}).
 */
export interface PyodideLike {
  version: string;
  runPython(code: string, options?: { globals?: unknown }): unknown;
  runPythonAsync(code: string, options?: { globals?: unknown }): Promise<unknown>;
  loadPackage(names: string | string[], options?: Record<string, unknown>): Promise<unknown>;
  registerJsModule(name: string, module: object): void;
  pyimport(name: string): PyProxyLike;
  /** Unpack an archive (`"whl"`: a wheel) into `extractDir`. */
  unpackArchive(buffer: Uint8Array, format: string, options?: { extractDir?: string }): void;
  /** Python's globals (a PyProxy of a dict). */
  globals: object;
}

/** A Pyodide instance whose `_module` was found (after checkPyodideInstance). */
export interface PyodideWithModule extends PyodideLike {
  _module: PyodideModuleLike;
  globals: { get(name: string): unknown; set(name: string, value: unknown): void };
}
