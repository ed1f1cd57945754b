/**
 * The webdlpack C library seen from JS: its ABI mirror, the host table JS
 * provides, and the loader that puts it into Pyodide.
 *
 *   abi.ts      C exports and host-table entries as TS types (doc comment = C prototype), struct layouts
 *   host.ts     the host functions C calls (GPU pointers via the context, tensor handles)
 *   handles.ts  handle table for managed tensors in flight between C and JS
 *   errors.ts   C last error ⇄ WebDLPackError
 *   memory.ts   heap helpers (views re-derived after memory growth)
 *   load.ts     loadWebDLPackC(pyodide, {url | bytes})
 *   transfers.ts  lib.upload / lib.readback: C memory ⇄ GPU pointers through the context's one transfer path
 */
export {
  CLIB_VERSION,
  HOST_TABLE_VERSION,
  CLIB_MAX_NDIM,
  CLIB_MESSAGE_CAP,
  HOST_TABLE_LAYOUT,
  GPU_BUFFER_INFO_LAYOUT,
  WEBGPU_STATS_LAYOUT,
  HOST_SIGNATURES,
  CLIB_EXPORT_NAMES,
  type HostEntryName,
  type HostFunctions,
  type WebDLPackCExports,
} from "./abi.js";
export { TensorHandleTable } from "./handles.js";
export { errorFromC, errorCodeName, hostErrorOf } from "./errors.js";
export type { HostError } from "./errors.js";
export { makeHostFunctions, CLIB_OWNER } from "./host.js";
export type { HostDeps, HostImpl } from "./host.js";
export { readCString, writeCString, heapView } from "./memory.js";
export type { HeapSource } from "./memory.js";
export { loadWebDLPackC, CLIB_DEFAULT_PATH } from "./load.js";
export type { ClibTransfers } from "./transfers.js";
export type {
  LoadWebDLPackCOptions,
  WebDLPackCLib,
  ClibPyodide,
  ClibModule,
  ClibFS,
  ClibGpuStats,
} from "./load.js";
