/**
 * The page-wide WebDLPackContext: WebGPU devices, the GPU pointer table, the
 * caching allocator and the lifetime ledger; and the page-wide list of Python
 * bridges (python-handoff.ts) behind `tensor.toPython()`. A thin façade: each
 * room has its own index.
 *
 *   global.ts          the singleton at globalThis[Symbol.for("webdlpack.context")], version check
 *   get-context.ts     getContext(), the protocol version and the members each minor requires (docs/spec.md C1, G4)
 *   context.ts         the class behind the context: a thin façade, one call into a room per method
 *   rooms.ts           the rooms of one context, made and wired together (what a device's arrival, removal or loss does)
 *   types.ts           the public interface and option types
 *   options.ts         the rules of each method's options bag (for arguments.ts checkOptions), pointer type check
 *   stats.ts           ctx.stats(): rows per device and per owner
 *   python-handoff.ts  the page-wide list of Python bridges (tensor.toPython())
 *   devices/           device ids, registration, device 0 setup, device loss, per-owner guards
 *   pointers/          GPU pointers (tag + generation + slot), the buffer table, registerGPUBuffer's check
 *   allocation/        buffer creation, cache modes and size classes, the destroy throttle
 *   transfers/         GPU byte movement, one home: upload, readback, GPU copy, clear; staging rings; loss
 *   ledger/            the lifetime ledger: entries with one release each, scopes, leak reports
 *   memory/            GPU memory by owner on each device, the budget, memory pressure (docs/memory.md)
 */
export { getContext } from "./get-context.js";
export { CONTEXT_GLOBAL_KEY } from "./global.js";
export type { SharedContextRecord } from "./global.js";
export type { WebDLPackContext, AllocOptions } from "./types.js";
export { unwrapDevice } from "./devices/index.js";
export { ownerLabel } from "./ledger/index.js";
export { createBufferAs, WEBDLPACK_OWNER, type MemoryPressure } from "./memory/index.js";
export { transfersFor } from "./transfers/index.js";
export {
  findPythonHandoff,
  pythonRuntimes,
  registerPythonHandoff,
  unregisterPythonHandoff,
  PYTHON_HANDOFFS_KEY,
  type PythonHandoff,
} from "./python-handoff.js";
