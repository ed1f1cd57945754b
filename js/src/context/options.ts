/**
 * The options each context method takes, as rules for the one options check
 * (arguments.ts checkOptions): any other key, or a value of the wrong kind, is
 * INVALID_ARGUMENT naming `options.<key>`. Values the callee checks itself
 * (device ids, usages, limits) pass here as ANY_OPTION; an owner is a string. The floor of
 * the context's rooms (index.ts): it imports nothing of the context, so any
 * room checks its options with it; the cache modes are named here, once.
 */
import { ANY_OPTION, BOOLEAN_OPTION, STRING_OPTION, type OptionRules } from "../arguments.js";
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";

/**
 * How freed buffers are handled, with ONNX Runtime Web's names
 * (`webgpuBufferCacheMode` / BufferCacheMode):
 *
 * - `disabled`: destroy at once on free (through the destroy throttle);
 * - `lazyRelease`: destroy at the next queue flush (after `onSubmittedWorkDone`
 *   of the work submitted before the free, or at `ctx.flush()`); no reuse;
 * - `simple`: keep freed buffers by exact size and usage and reuse them;
 * - `bucket`: round storage-buffer sizes up to size classes, keep freed
 *   buffers per class (capped by count and bytes) and reuse them.
 */
export type CacheMode = "disabled" | "lazyRelease" | "simple" | "bucket";

/** Every cache mode, in order of how much is kept. */
export const CACHE_MODES: readonly CacheMode[] = Object.freeze(["disabled", "lazyRelease", "simple", "bucket"]);

/** Check a cache mode name. Throws INVALID_ARGUMENT naming `field`. */
export function checkCacheMode(mode: unknown, field: string): CacheMode {
  if (typeof mode !== "string" || !(CACHE_MODES as readonly string[]).includes(mode)) {
    throw new WebDLPackError("INVALID_ARGUMENT", "unknown GPU buffer cache mode", {
      field,
      value: describeValue(mode),
      expected: `one of ${CACHE_MODES.map((m) => `"${m}"`).join(", ")}`,
    });
  }
  return mode as CacheMode;
}

/** AllocOptions of allocWebGPU / allocWebGPUChecked. */
export const ALLOC_OPTION_RULES: OptionRules = {
  deviceId: ANY_OPTION,
  usage: ANY_OPTION,
  label: STRING_OPTION,
  owner: STRING_OPTION,
  onAsyncError: { accepts: (v) => typeof v === "function", expected: "a function (error, ptr) => void" },
  scoped: { accepts: (v) => typeof v === "boolean", expected: "a boolean" },
};

/** RegisterBufferOptions of registerGPUBuffer. */
export const REGISTER_OPTION_RULES: OptionRules = {
  deviceId: ANY_OPTION,
  owned: BOOLEAN_OPTION,
  owner: STRING_OPTION,
  onRelease: { accepts: (v) => typeof v === "function", expected: "a function (buffer, ptr) => void" },
  tracked: BOOLEAN_OPTION,
  readOnly: BOOLEAN_OPTION,
};

/** DeviceOptions of getWebGPUDevice. */
export const DEVICE_OPTION_RULES: OptionRules = {
  owner: { accepts: (v) => typeof v === "string" && v !== "", expected: "a framework name (non-empty string)" },
};

/** CacheModeOptions of setCacheMode (the limits are checked by the allocators). */
export const CACHE_MODE_OPTION_RULES: OptionRules = {
  deviceId: ANY_OPTION,
  cacheLimits: ANY_OPTION,
  throttleLimits: ANY_OPTION,
};

/** INVALID_POINTER unless `ptr` is a number (a BigInt, string... never reaches the table's bit arithmetic). */
export function checkPointerType(ptr: unknown, fn: string): void {
  if (typeof ptr !== "number") {
    throw new WebDLPackError("INVALID_POINTER", `${fn}: not a GPU pointer`, {
      field: "ptr",
      value: describeValue(ptr),
      expected: "a GPU pointer: a nonzero unsigned 32-bit number (not a BigInt)",
    });
  }
}
