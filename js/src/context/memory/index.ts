/**
 * The memory room: every GPUBuffer on the context's devices counted by owner,
 * the page's budget, and making room under pressure (docs/memory.md).
 *
 *   meter.ts           counting one device's buffers by owner (its createBuffer, GPUBuffer destroy)
 *   pressure.ts        ctx.onMemoryPressure handlers and calling them in order
 *   context-memory.ts  meters, budgets, making room, OUT_OF_MEMORY; the room's calls (memory, setMemoryBudget, trimMemory, onMemoryPressure)
 *   room.ts            webdlpack's own caches as one unit; checked creation with room and one retry
 */
export { createBufferAs, meterOf, PAGE_OWNER, WEBDLPACK_OWNER, type OwnerBytes } from "./meter.js";
export {
  checkPressureArguments,
  type MemoryPressure,
  type MemoryPressureHandler,
  type MemoryPressureOptions,
  type PressureReason,
} from "./pressure.js";
export { ContextMemory, type MemoryOwnerReport, type MemoryReport, type OwnCaches } from "./context-memory.js";
export { createWithRoom, ownCachesOf } from "./room.js";
