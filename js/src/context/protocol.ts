/**
 * The context protocol as data: which members each protocol minor of major 1
 * requires (docs/spec.md, rule C1). A copy of webdlpack that finds a context
 * made by a copy with an older minor checks it against this table and names
 * what is missing (rule G4); the conformance kit checks contexts against it.
 * When a member is added to {@link WebDLPackContext}: bump CONTEXT_PROTOCOL.minor
 * (get-context.ts) and list the member under the new minor here.
 */

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
