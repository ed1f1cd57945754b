/**
 * Typed errors for every failure webdlpack reports.
 *
 * Each error carries a stable `code` (for programs), and where it applies the
 * `field` that was wrong, the `value` found there and what was `expected`
 * (for people). The same codes are used by the C library's last-error and by
 * the Python package, so a failure reads the same in every language.
 */

import { valueText } from "./describe-value.js";

/** Stable error codes. Numbers match `wdl_error_code` in wasm/include/webdlpack/webdlpack.h. */
export const ErrorCode = {
  OK: 0,
  INVALID_ARGUMENT: 1,
  OUT_OF_BOUNDS: 2,
  NULL_POINTER: 3,
  BAD_NDIM: 4,
  BAD_SHAPE: 5,
  BAD_STRIDES: 6,
  SIZE_OVERFLOW: 7,
  BAD_DTYPE: 8,
  BAD_DEVICE: 9,
  VERSION_MISMATCH: 10,
  BAD_FLAGS: 11,
  NO_WEBGPU: 12,
  NO_ADAPTER: 13,
  UNKNOWN_DEVICE: 14,
  DEVICE_LOST: 15,
  INVALID_POINTER: 16,
  STALE_POINTER: 17,
  DOUBLE_FREE: 18,
  OUT_OF_MEMORY: 19,
  ALREADY_CONSUMED: 20,
  DISPOSED: 21,
  INCOMPATIBLE_CONTEXT: 22,
  COPY_REQUIRED: 23,
  UNSUPPORTED: 24,
  GPU_ERROR: 25,
} as const;

/** Name of an error code, e.g. `"STALE_POINTER"`. */
export type ErrorCodeName = keyof typeof ErrorCode;

/** Details attached to a {@link WebDLPackError}. */
export interface ErrorDetails {
  /** The struct field or argument that was wrong, e.g. `"DLTensor.ndim"`. */
  field?: string;
  /** The value that was found there. */
  value?: unknown;
  /** What was expected instead, in words, e.g. `"0 <= ndim <= 32"`. */
  expected?: string;
  /** The underlying error, if any. */
  cause?: unknown;
}

/** Brand shared by every copy of the library on a page, so `instanceof` works across copies. */
const BRAND = Symbol.for("webdlpack.error");

/**
 * The one error type webdlpack throws. Check `err.code` (a name from {@link ErrorCode}).
 *
 * `err instanceof WebDLPackError` is true for errors thrown by any copy of
 * webdlpack on the page (two bundles share one context), through a brand.
 */
export class WebDLPackError extends Error {
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
  readonly [BRAND] = true;
  override readonly name = "WebDLPackError";
  /** Stable code name, e.g. `"OUT_OF_BOUNDS"`. */
  readonly code: ErrorCodeName;
  /** Numeric code shared with the C library. */
  readonly errno: number;
  readonly field: string | undefined;
  readonly value: unknown;
  readonly expected: string | undefined;

  constructor(code: ErrorCodeName, message: string, details: ErrorDetails = {}) {
    const parts = [message];
    if (details.field !== undefined) parts.push(`field ${details.field}`);
    if ("value" in details) parts.push(`value ${valueText(details.value)}`);
    if (details.expected !== undefined) parts.push(`expected ${details.expected}`);
    super(`[${code}] ${parts.join("; ")}`, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.errno = ErrorCode[code];
    this.field = details.field;
    this.value = details.value;
    this.expected = details.expected;
  }
}

/** Throw a {@link WebDLPackError} unless `condition` holds. */
export function check(
  condition: boolean,
  code: ErrorCodeName,
  message: string,
  details?: ErrorDetails,
): asserts condition {
  if (!condition) throw new WebDLPackError(code, message, details);
}

/**
 * Report an error thrown by user code webdlpack called where nothing can catch
 * it (a release function, a device-lost listener): the host's `reportError`
 * (an "error" event, as an uncaught exception), else `console.error` naming `what`.
 */
export function reportUncaught(err: unknown, what: string): void {
  const report = (globalThis as { reportError?: (e: unknown) => void }).reportError;
  if (typeof report === "function") report(err);
  else console.error(`webdlpack: ${what} threw`, err);
}
