/**
 * The memory room: every GPUBuffer on the context's devices counted by owner,
 * the page's budget, and making room under pressure (docs/memory.md).
 *
 *   (the meter of each device is in ground/: every buffer creation goes through it)
 *   pressure.ts        ctx.onMemoryPressure handlers and calling them in order
 *   context-memory.ts  meters, budgets, making room, OUT_OF_MEMORY; the room's calls (memory, setMemoryBudget, trimMemory, onMemoryPressure)
 *   room.ts            checked creation with room made first and one retry
 */
export {
  checkPressureArguments,
  type MemoryPressure,
  type MemoryPressureHandler,
  type MemoryPressureOptions,
  type PressureReason,
} from "./pressure.js";
export { ContextMemory, type MemoryOwnerReport, type MemoryReport, type OwnCaches } from "./context-memory.js";
export { createWithRoom } from "./room.js";
