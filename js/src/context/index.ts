/**
 * The page-wide WebDLPackContext: WebGPU devices, the GPU pointer table, the
 * caching allocator and the lifetime ledger; and the page-wide list of Python
 * bridges (python-handoff.ts) behind `tensor.toPython()`. A thin façade over
 * rooms, each with its own index; this file lists what other layers use.
 *
 * Rooms, bottom up (a file imports only from its own room or the ones before
 * it; tests/js/import-graph.test.ts reads this list and checks it):
 *   options.ts         each method's options rules (arguments.ts checkOptions), cache modes, pointer type check
 *   ground/            what the rest stands on: buffer creation with its metering by owner, buffer facts
 *   devices/           device ids, registration, device 0 setup, device loss, per-owner guards
 *   ledger/            the lifetime ledger: entries with one release each, scopes, leak reports
 *   memory/            GPU memory by owner on each device, the budget, memory pressure (docs/memory.md)
 *   allocation/        cache modes and size classes, the cache of freed buffers, the destroy throttle
 *   pointers/          GPU pointers (tag + generation + slot), the buffer table, allocWebGPU, registerGPUBuffer's check
 *   transfers/         GPU byte movement, one home: upload, readback, GPU copy, clear; staging rings; loss
 *   types.ts           the public interface (option types live in their rooms)
 *   python-handoff.ts  the page-wide list of Python bridges (tensor.toPython())
 *   rooms.ts           the rooms of one context, made and wired together (what a device's arrival, removal or loss does)
 *   stats.ts           ctx.stats(): rows per device and per owner
 *   context.ts         the class behind the context: a thin façade, one call into a room per method
 *   global.ts          the singleton at globalThis[Symbol.for("webdlpack.context")], version check
 *   get-context.ts     getContext(), the protocol version and the members each minor requires (docs/spec.md C1, G4)
 *   index.ts           this file
 */
export { getContext } from "./get-context.js";
export { CONTEXT_GLOBAL_KEY } from "./global.js";
export type { SharedContextRecord } from "./global.js";
export type { WebDLPackContext, AllocOptions } from "./types.js";
export { unwrapDevice } from "./devices/index.js";
export { ownerLabel } from "./ledger/index.js";
export { createBufferAs, WEBDLPACK_OWNER } from "./ground/index.js";
export type { MemoryPressure } from "./memory/index.js";
export { transfersFor } from "./transfers/index.js";
export {
  findPythonHandoff,
  pythonRuntimes,
  registerPythonHandoff,
  unregisterPythonHandoff,
  PYTHON_HANDOFFS_KEY,
  type PythonHandoff,
} from "./python-handoff.js";
