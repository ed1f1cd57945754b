/**
 * Memory pressure: who can give GPU memory back, and asking them in order.
 *
 * An allocation that would cross the budget, or that the device refused with
 * an out-of-memory error, first makes room: webdlpack trims its own caches,
 * then every handler registered with `ctx.onMemoryPressure` is called (the
 * adapters register one per framework), in registration order, until the
 * request fits. Handlers are called synchronously where the allocation is
 * synchronous (a framework's `createBuffer`); a promise a handler returns is
 * awaited only on asynchronous paths (`allocWebGPUChecked`).
 */
import { describeValue } from "../../describe-value.js";
import { WebDLPackError } from "../../errors.js";

/** Why room is being made ("request": `ctx.trimMemory()`). */
export type PressureReason = "budget" | "out-of-memory" | "request";

/** What a pressure handler is told. */
export interface MemoryPressure {
  /** The device (webdlpack id). */
  readonly deviceId: number;
  /**
   * "budget": the request would cross `setup({memoryBudget})`; "out-of-memory": the device refused an
   * allocation; "request": the page asked (`ctx.trimMemory()`).
   */
  readonly reason: PressureReason;
  /** Bytes of the allocation that triggered it (0 when not known, e.g. a framework's refused allocation). */
  readonly requestedBytes: number;
  /** Who asked: "webdlpack", a framework's owner name, or "page". */
  readonly requestedBy: string;
  /** The budget in bytes, or null. */
  readonly budget: number | null;
  /** Bytes counted on the device when the handler is called. */
  readonly totalBytes: number;
  /** Bytes to give back for the request to fit (Infinity: as much as you can, for a device out-of-memory). */
  readonly bytesToFree: number;
}

/** A pressure handler: give back what you can (destroy cached buffers). A returned promise is awaited on async paths. */
export type MemoryPressureHandler = (pressure: MemoryPressure) => unknown;

/** Options of `ctx.onMemoryPressure`. */
export interface MemoryPressureOptions {
  /** Whose memory the handler gives back (an owner name as in `ctx.memory()`; default "page"). */
  owner?: string;
  /** Bytes the owner keeps cached (free for reuse) now, for `ctx.memory()`; null when it can not tell. */
  cachedBytes?: () => number | null;
}

/** One registration. */
interface Registration {
  readonly owner: string;
  readonly handler: MemoryPressureHandler | undefined;
  readonly cachedBytes: (() => number | null) | undefined;
}

/** Check `ctx.onMemoryPressure` arguments; INVALID_ARGUMENT naming the field. */
export function checkPressureArguments(
  handler: unknown,
  options: unknown,
): Required<Pick<MemoryPressureOptions, "owner">> & MemoryPressureOptions {
  const bad = (field: string, value: unknown, expected: string): WebDLPackError =>
    new WebDLPackError("INVALID_ARGUMENT", "bad onMemoryPressure argument", {
      field,
      value: describeValue(value),
      expected,
    });
  if (handler !== null && typeof handler !== "function")
    throw bad("handler", handler, "a function (pressure) => void, or null");
  if (options === undefined) return { owner: "page" };
  if (options === null || typeof options !== "object") throw bad("options", options, "an object or undefined");
  const o = options as MemoryPressureOptions;
  if (o.owner !== undefined && (typeof o.owner !== "string" || o.owner === ""))
    throw bad("options.owner", o.owner, "a non-empty string");
  if (o.cachedBytes !== undefined && typeof o.cachedBytes !== "function")
    throw bad("options.cachedBytes", o.cachedBytes, "a function () => number | null");
  return { ...o, owner: o.owner ?? "page" };
}

/** The handlers of a page, in registration order. */
export class PressureHandlers {
  readonly #entries: Registration[] = [];

  /** Register; returns the function that unregisters (safe to call twice). */
  add(handler: MemoryPressureHandler | null, options: MemoryPressureOptions & { owner: string }): () => void {
    const entry: Registration = {
      owner: options.owner,
      handler: handler ?? undefined,
      cachedBytes: options.cachedBytes,
    };
    this.#entries.push(entry);
    return () => {
      const at = this.#entries.indexOf(entry);
      if (at >= 0) this.#entries.splice(at, 1);
    };
  }

  /** Cached bytes `owner`'s registrations report (summed), or null when none reports. */
  cachedBytes(owner: string): number | null {
    let sum: number | null = null;
    for (const e of this.#entries) {
      if (e.owner !== owner || e.cachedBytes === undefined) continue;
      let n: number | null = null;
      try {
        n = e.cachedBytes();
      } catch (err) {
        console.error(`webdlpack: the cachedBytes() of "${owner}" threw`, err);
      }
      if (typeof n === "number" && Number.isFinite(n)) sum = (sum ?? 0) + Math.max(0, n);
    }
    return sum;
  }

  /**
   * Call the handlers in order until `fits()` (never, for `fits` undefined: all of them).
   * A handler that throws is reported on the console and skipped. Returns the promises handlers returned.
   */
  call(pressure: () => MemoryPressure, fits: (() => boolean) | undefined): Promise<unknown>[] {
    const pending: Promise<unknown>[] = [];
    for (const e of [...this.#entries]) {
      if (e.handler === undefined) continue;
      if (fits?.()) break;
      try {
        const r = e.handler(pressure());
        if (r !== null && typeof r === "object" && typeof (r as Promise<unknown>).then === "function") {
          pending.push(
            Promise.resolve(r).catch((err: unknown) =>
              console.error(`webdlpack: the memory pressure handler of "${e.owner}" failed`, err),
            ),
          );
        }
      } catch (err) {
        console.error(`webdlpack: the memory pressure handler of "${e.owner}" threw`, err);
      }
    }
    return pending;
  }
}
