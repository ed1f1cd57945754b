/**
 * The small part of Pyodide's API that webdlpack uses, typed structurally so
 * webdlpack does not depend on the `pyodide` package at build time.
 */

/** Emscripten module internals that Pyodide exposes as `pyodide._module`. */
export interface EmscriptenModuleLike {
  /** Byte view of the wasm heap; replaced by a new view when the heap grows. */
  HEAPU8: Uint8Array;
  _malloc(nbytes: number): number;
  _free(address: number): void;
  addFunction(fn: (...args: number[]) => unknown, signature: string): number;
  removeFunction(index: number): void;
  wasmTable: WebAssembly.Table;
  FS: {
    mkdirTree(path: string): void;
    writeFile(path: string, data: Uint8Array): void;
  };
  loadDynamicLibrary?(path: string, flags?: Record<string, unknown>): Promise<unknown> | unknown;
}

/** A Python object proxied into JS. */
export interface PyProxyLike {
  destroy(): void;
  [key: string]: unknown;
}

/** The Pyodide API object returned by `loadPyodide()`. */
export interface PyodideLike {
  _module: EmscriptenModuleLike;
  version: string;
  runPython(code: string, options?: { globals?: unknown }): unknown;
  runPythonAsync(code: string, options?: { globals?: unknown }): Promise<unknown>;
  loadPackage(names: string | string[], options?: Record<string, unknown>): Promise<unknown>;
  registerJsModule(name: string, module: object): void;
  pyimport(name: string): PyProxyLike;
  globals: { get(name: string): unknown; set(name: string, value: unknown): void };
}
