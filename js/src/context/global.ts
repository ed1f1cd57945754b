/**
 * The page-wide singleton and its version negotiation.
 *
 * The context lives at `globalThis[Symbol.for("webdlpack.context")]` as a
 * record `{protocol: {major, minor}, context}`. `Symbol.for` is shared by every
 * script of the realm, so two copies of webdlpack on one page (two bundles,
 * two versions) find the same record:
 *
 * - same major: the second copy uses the existing context object through the
 *   {@link WebDLPackContext} interface only (its class is the first copy's; never
 *   use `instanceof` on it). If that context was made by a copy with an older
 *   minor, every member this copy's minor requires must be there (`missingMembers`:
 *   for the context, get-context.ts), else INCOMPATIBLE_CONTEXT naming them (docs/spec.md G4);
 * - other major: INCOMPATIBLE_CONTEXT naming both versions.
 */
import { WebDLPackError } from "../errors.js";
import type { ContextProtocol } from "./types.js";

/** The global key of the shared context record: `Symbol.for("webdlpack.context")`. */
export const CONTEXT_GLOBAL_KEY: symbol = Symbol.for("webdlpack.context");

/** The shared record at {@link CONTEXT_GLOBAL_KEY}. */
export interface SharedContextRecord<T> {
  /** Protocol of the copy that made the context. */
  readonly protocol: ContextProtocol;
  /** The context. */
  readonly context: T;
}

/** Records of an older minor → the highest minor whose members their context was found to have. */
const complete = new WeakMap<object, number>();

function formatProtocol(p: ContextProtocol): string {
  return `${p.major}.${p.minor}`;
}

function isProtocol(value: unknown): value is ContextProtocol {
  if (value === null || typeof value !== "object") return false;
  const p = value as Record<string, unknown>;
  return Number.isInteger(p["major"]) && Number.isInteger(p["minor"]);
}

/**
 * The shared context at `key`: the existing one if its protocol major equals
 * `protocol.major`, else a new one from `create()` stored there. An existing
 * one of an older minor must have what `missingMembers(context, protocol.minor)`
 * asks for. Throws INCOMPATIBLE_CONTEXT for another major, missing members or a
 * malformed record.
 */
export function claimSharedContext<T extends object>(
  protocol: ContextProtocol,
  create: () => T,
  key: symbol = CONTEXT_GLOBAL_KEY,
  missingMembers: (context: object, minor: number) => string[] = () => [],
): T {
  const slot = globalThis as unknown as Record<symbol, unknown>;
  const existing = slot[key];
  if (existing === undefined) {
    const record: SharedContextRecord<T> = Object.freeze({
      protocol: Object.freeze({ ...protocol }),
      context: create(),
    });
    Object.defineProperty(globalThis, key, { value: record, writable: true, configurable: true, enumerable: false });
    return record.context;
  }
  const where = `globalThis[Symbol.for("${key.description ?? ""}")]`;
  if (existing === null || typeof existing !== "object") {
    throw new WebDLPackError(
      "INCOMPATIBLE_CONTEXT",
      `${where} holds something that is not a webdlpack context record`,
      {
        field: where,
        value: existing,
        expected: "a {protocol: {major, minor}, context} record",
      },
    );
  }
  const record = existing as Partial<SharedContextRecord<unknown>>;
  if (!isProtocol(record.protocol) || record.context === null || typeof record.context !== "object") {
    throw new WebDLPackError(
      "INCOMPATIBLE_CONTEXT",
      `${where} holds something that is not a webdlpack context record`,
      {
        field: `${where}.protocol`,
        value: isProtocol(record.protocol) ? formatProtocol(record.protocol) : String(record.protocol),
        expected: "a {protocol: {major, minor}, context} record",
      },
    );
  }
  if (record.protocol.major !== protocol.major) {
    throw new WebDLPackError(
      "INCOMPATIBLE_CONTEXT",
      `this copy of webdlpack speaks context protocol ${formatProtocol(protocol)}, but the page's context was made by a copy ` +
        `speaking protocol ${formatProtocol(record.protocol)}; load webdlpack copies of one major version on a page`,
      {
        field: `${where}.protocol.major`,
        value: record.protocol.major,
        expected: `${protocol.major}`,
      },
    );
  }
  if (record.protocol.minor < protocol.minor && (complete.get(record) ?? -1) < protocol.minor) {
    const missing = missingMembers(record.context, protocol.minor);
    if (missing.length > 0) {
      throw new WebDLPackError(
        "INCOMPATIBLE_CONTEXT",
        `this copy of webdlpack speaks context protocol ${formatProtocol(protocol)}, but the page's context was made by a copy ` +
          `speaking ${formatProtocol(record.protocol)} and lacks ${missing.join(", ")}; load the newer copy first, or one version of webdlpack`,
        {
          field: `${where}.context.{${missing.join(", ")}}`,
          value: formatProtocol(record.protocol),
          expected: `a context with every member of protocol ${formatProtocol(protocol)}`,
        },
      );
    }
    complete.set(record, protocol.minor); // checked once: later getContext() calls stay a few property reads
  }
  return record.context as T;
}
