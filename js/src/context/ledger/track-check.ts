/**
 * What ledger.track is given: the check of its options (INVALID_ARGUMENT
 * naming the field) and, when `ctx.debug.captureStacks` is on, where the
 * caller made the entry.
 */
import { describeValue } from "../../describe-value.js";
import { WebDLPackError } from "../../errors.js";
import type { TrackOptions } from "./entry.js";

/** `options` after checking them; INVALID_ARGUMENT naming `options.<field>` otherwise. */
export function checkTrack(options: unknown): TrackOptions {
  const bad = (field: string, value: unknown, expected: string): WebDLPackError =>
    new WebDLPackError("INVALID_ARGUMENT", "bad ledger.track options", {
      field: `options.${field}`,
      value: describeValue(value),
      expected,
    });
  if (options === null || typeof options !== "object")
    throw bad("", options, "an object {kind, owner, deviceId, bytes, pointer?, release}");
  const o = options as TrackOptions;
  if (o.kind !== "tensor" && o.kind !== "gpu-buffer" && o.kind !== "export") {
    throw bad("kind", o.kind, '"tensor", "gpu-buffer" or "export"');
  }
  if (typeof o.release !== "function") throw bad("release", o.release, "a function () => void");
  if (o.deviceId !== undefined && o.deviceId !== null && (!Number.isInteger(o.deviceId) || o.deviceId < 0)) {
    throw bad("deviceId", o.deviceId, "an integer >= 0, or null");
  }
  if (o.bytes !== undefined && (typeof o.bytes !== "number" || !Number.isSafeInteger(o.bytes) || o.bytes < 0)) {
    throw bad("bytes", o.bytes, "a safe integer >= 0");
  }
  if (o.pointer !== undefined && (typeof o.pointer !== "number" || o.pointer >>> 0 !== o.pointer || o.pointer === 0)) {
    throw bad("pointer", o.pointer, "a nonzero unsigned 32-bit GPU pointer");
  }
  if (o.stack !== undefined && typeof o.stack !== "string") throw bad("stack", o.stack, "a string");
  if (o.scoped !== undefined && typeof o.scoped !== "boolean") throw bad("scoped", o.scoped, "a boolean");
  return o;
}

/** A short stack of the caller, without webdlpack's own frames. */
export function captureStack(): string {
  const lines = (new Error().stack ?? "")
    .split("\n")
    .slice(1)
    .map((l) => l.trim());
  const outside = lines.filter(
    (l) =>
      !/webdlpack\.bundle|[/\\]context[/\\](ledger[/\\][a-z-]+|context|pointers[/\\]buffer-table|allocation[/\\]pointer-allocations)\.[jt]s/.test(
        l,
      ),
  );
  return (outside.length > 0 ? outside : lines).slice(0, 5).join("\n");
}
