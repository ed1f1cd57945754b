/** Hand-offs between JS and the other languages on the page — Python (Pyodide) and C (wasm) — and, for CPU tensors, other threads (threads.ts). */
export * from "./pyodide.js";
export type { PyodideLike, PyProxyLike } from "./pyodide-types.js";
export * from "./clib/index.js";
export * from "./threads.js";
