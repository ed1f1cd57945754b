/**
 * `getContext()`: the page's one {@link WebDLPackContext}, made on first call.
 */
import { PageContext } from "./context.js";
import { CONTEXT_GLOBAL_KEY, claimSharedContext } from "./global.js";
import { missingContextMembers } from "./protocol.js";
import type { ContextProtocol, WebDLPackContext } from "./types.js";

/**
 * The protocol this copy of webdlpack speaks. Bump `minor` when methods are
 * added to {@link WebDLPackContext} (and list them in protocol.ts), `major` when
 * one is removed or changes so that callers of the old one break.
 * 1.2: allocWebGPU returns the pointer synchronously, allocWebGPUChecked added
 * (allocWebGPUSync stays, the same function, for 1.1 copies).
 */
export const CONTEXT_PROTOCOL: ContextProtocol = Object.freeze({ major: 1, minor: 2 });

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
