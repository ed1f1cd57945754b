/**
 * The page-wide WebDLPackContext: WebGPU devices and the GPU pointer table.
 *
 *   global.ts         the singleton at globalThis[Symbol.for("webdlpack.context")], version check
 *   get-context.ts    getContext(), the protocol version
 *   context.ts        the class behind the context
 *   devices.ts        device ids, registration, device loss
 *   setup.ts          adapter/device request and the setup config
 *   allocation.ts     buffer creation under error scopes, usage, size rounding
 *   pointer-table.ts  GPU pointers: slot + generation, O(1) translation
 *   types.ts          the public interface and option types
 */
export { getContext, CONTEXT_PROTOCOL } from "./get-context.js";
export { CONTEXT_GLOBAL_KEY } from "./global.js";
export type { SharedContextRecord } from "./global.js";
export type {
  WebDLPackContext, AllocOptions, RegisterBufferOptions, GPUPointerInfo, ContextStats, DeviceStats, ContextProtocol,
} from "./types.js";
export type { SetupConfig, DeviceInfo, LimitsSummary } from "./setup.js";
export { ML_LIMITS } from "./setup.js";
export type { AdapterInfoSummary, DeviceLostEvent, DeviceLostListener } from "./devices.js";
export { GPUUsage, DEFAULT_GPU_USAGE, GPU_ALLOCATION_ALIGNMENT } from "./allocation.js";
export {
  describeGPUPointer, GPU_POINTER_GENERATION_BITS, GPU_POINTER_SLOT_BITS,
} from "./pointer-table.js";
export type { GPUPointer, PointerParts } from "./pointer-table.js";
