/**
 * Errors across the C/JS boundary: C's last error → a typed WebDLPackError,
 * and any JS exception → the (code, message) pair a host entry reports to C.
 */
import { ErrorCode, WebDLPackError, type ErrorCodeName } from "../../errors.js";

const NAMES: ReadonlyMap<number, ErrorCodeName> = new Map(
  (Object.entries(ErrorCode) as [ErrorCodeName, number][]).map(([name, num]) => [num, name]),
);

/** The ErrorCode name of a numeric code, or undefined for numbers no code has. */
export function errorCodeName(code: number): ErrorCodeName | undefined {
  return NAMES.get(code);
}

/**
 * A WebDLPackError for C's last error. `message` is C's own text
 * ("[NAME] what; field F; value V; expected E"); the leading "[NAME] " is
 * dropped because WebDLPackError adds it again. Unknown codes become GPU_ERROR
 * with the number in the message.
 */
export function errorFromC(code: number, message: string, where: string): WebDLPackError {
  const name = errorCodeName(code);
  const text = message.replace(/^\[[A-Z_]+\] /, "");
  if (name === undefined || name === "OK") {
    return new WebDLPackError("GPU_ERROR", `${where}: C library failed with code ${code}: ${text}`, {
      field: "wdl_last_error_code()",
      value: code,
      expected: "a wdl_error_code (1..25)",
    });
  }
  return new WebDLPackError(name, `${where}: ${text}`);
}

/** A code and message for C, from anything a host function caught. */
export interface HostError {
  /** wdl_error_code number (nonzero). */
  code: number;
  /** Full message, e.g. "[STALE_POINTER] ...". */
  message: string;
}

/**
 * Turn a caught value into a {@link HostError}. WebDLPackErrors (also from
 * another copy of the library, recognised by their numeric `errno`) keep
 * their code; anything else is GPU_ERROR.
 */
export function hostErrorOf(err: unknown): HostError {
  if (typeof err === "object" && err !== null) {
    const e = err as { errno?: unknown; message?: unknown; name?: unknown };
    if (typeof e.errno === "number" && errorCodeName(e.errno) !== undefined && e.errno !== 0) {
      return { code: e.errno, message: String(e.message) };
    }
    const text = typeof e.message === "string" ? e.message : String(err);
    return { code: ErrorCode.GPU_ERROR, message: `[GPU_ERROR] ${String(e.name ?? "Error")}: ${text}` };
  }
  return { code: ErrorCode.GPU_ERROR, message: `[GPU_ERROR] ${String(err)}` };
}
