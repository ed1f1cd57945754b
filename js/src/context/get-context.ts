/**
 * `getContext()`: the page's one {@link WebDLPackContext}, made on first call;
 * and the context protocol it speaks, as a version and as data: which members
 * each protocol minor of major 1 requires (docs/spec.md, rule C1). A copy of
 * webdlpack that finds a context made by a copy with an older minor checks it
 * against this table and names what is missing (rule G4); the conformance kit
 * checks contexts against it. When a member is added to {@link WebDLPackContext}:
 * bump CONTEXT_PROTOCOL.minor and list the member under the new minor.
 */
import { PageContext } from "./context.js";
import { CONTEXT_GLOBAL_KEY, claimSharedContext } from "./global.js";
import type { ContextProtocol, WebDLPackContext } from "./types.js";

/**
 * The protocol this copy of webdlpack speaks. Bump `minor` when methods are
 * added to {@link WebDLPackContext} (and list them in CONTEXT_MEMBERS_ADDED), `major` when
 * one is removed or changes so that callers of the old one break.
 * 1.2: allocWebGPU returns the pointer synchronously, allocWebGPUChecked added
 * (allocWebGPUSync stays, the same function, for 1.1 copies).
 * 1.3: memory(), setMemoryBudget(), onMemoryPressure(), trimMemory() (docs/memory.md).
 */
export const CONTEXT_PROTOCOL: ContextProtocol = Object.freeze({ major: 1, minor: 3 });

/**
 * The page-wide context, created on first call and shared by every copy of
 * webdlpack with the same protocol major. Throws INCOMPATIBLE_CONTEXT when the
 * page's context was made by a copy with another major, or with an older minor
 * whose context lacks members this copy needs (docs/spec.md G3, G4).
 */
export function getContext(): WebDLPackContext {
  // Hand-offs call this several times each: while the global still holds the record this copy claimed (records are
  // frozen, so its context cannot change), answer from it without re-checking the protocol.
  const record = (globalThis as unknown as Record<symbol, unknown>)[CONTEXT_GLOBAL_KEY];
  if (record === claimedRecord && record !== undefined) return claimedContext!;
  const context = claimSharedContext<WebDLPackContext>(
    CONTEXT_PROTOCOL,
    createContext,
    CONTEXT_GLOBAL_KEY,
    missingContextMembers,
  );
  claimedRecord = (globalThis as unknown as Record<symbol, unknown>)[CONTEXT_GLOBAL_KEY];
  claimedContext = context;
  return context;
}

/** The global record this copy last claimed (checked), and its context. */
let claimedRecord: unknown;
let claimedContext: WebDLPackContext | undefined;

function createContext(): WebDLPackContext {
  return new PageContext(CONTEXT_PROTOCOL);
}

/** Members each minor of protocol major 1 added (minor 1 is the first published). */
export const CONTEXT_MEMBERS_ADDED: Readonly<Record<number, readonly string[]>> = Object.freeze({
  1: Object.freeze([
    "protocol",
    "setup",
    "getWebGPUDevice",
    "registerWebGPUDevice",
    "unregisterWebGPUDevice",
    "onDeviceLost",
    "allocWebGPU",
    "allocWebGPUSync",
    "lastAsyncError",
    "setCacheMode",
    "getCacheMode",
    "flush",
    "readback",
    "readbackInto",
    "ledger",
    "debug",
    "scope",
    "keep",
    "dispose",
    "leaks",
    "registerGPUBuffer",
    "gpuPointerToBuffer",
    "gpuPointerInfo",
    "freeWebGPU",
    "stats",
  ]),
  2: Object.freeze(["allocWebGPUChecked", "upload", "copyBuffer", "clearBuffer", "transferStats"]),
  3: Object.freeze(["memory", "setMemoryBudget", "onMemoryPressure", "trimMemory"]),
});

/** Members that are data, not methods. */
const DATA_MEMBERS: ReadonlySet<string> = new Set(["protocol", "ledger", "debug"]);

/** Every member a context of protocol `1.minor` must have, in table order. */
export function contextMembers(minor: number): string[] {
  const out: string[] = [];
  for (const [m, names] of Object.entries(CONTEXT_MEMBERS_ADDED)) if (Number(m) <= minor) out.push(...names);
  return out;
}

/** The members of protocol `1.minor` that `context` lacks (a method must be a function, data an object). */
export function missingContextMembers(context: object, minor: number): string[] {
  const c = context as Record<string, unknown>;
  return contextMembers(minor).filter((name) => {
    const v = c[name];
    return DATA_MEMBERS.has(name) ? v === null || typeof v !== "object" : typeof v !== "function";
  });
}
