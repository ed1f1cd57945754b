/**
 * Typed checks of the arguments public entry points receive (internal; not
 * re-exported): an options bag that is not an object, an unknown option, an
 * option of the wrong kind. Each failure is an INVALID_ARGUMENT naming the
 * field, the value found and what was expected.
 */
import { describeValue } from "./describe-value.js";
import { WebDLPackError } from "./errors.js";

/**
 * Throw INVALID_ARGUMENT (with `message`, naming `field`) unless `value` is a
 * non-null object.
 */
export function requireObject<T>(
  value: T,
  field: string,
  expected: string,
  message: string,
): asserts value is T & object {
  if (value === null || typeof value !== "object") {
    throw new WebDLPackError("INVALID_ARGUMENT", message, { field, value: describeValue(value), expected });
  }
}

/** How one option is checked by {@link checkOptions}. */
export interface OptionRule {
  /** True if `value` (never undefined: an absent option is always fine) is acceptable. */
  accepts(value: unknown): boolean;
  /** What is accepted, in words, for the error. */
  readonly expected: string;
}

/** A rule accepting a URL string or a `URL` object. */
export const URL_OPTION: OptionRule = {
  accepts: (v) => typeof v === "string" || v instanceof URL,
  expected: "a URL string or URL object",
};

/** A rule accepting a function. */
export const FUNCTION_OPTION: OptionRule = { accepts: (v) => typeof v === "function", expected: "a function" };

/** A rule for an option its callee checks itself (a device id, a usage, an owner label). */
export const ANY_OPTION: OptionRule = { accepts: () => true, expected: "any value" };

/** A rule accepting `true` or `false`. */
export const BOOLEAN_OPTION: OptionRule = { accepts: (v) => typeof v === "boolean", expected: "true or false" };

/** A rule accepting a string. */
export const STRING_OPTION: OptionRule = { accepts: (v) => typeof v === "string", expected: "a string" };

/** The rules of one options bag, by option name. */
export type OptionRules = Readonly<Record<string, OptionRule>>;

/**
 * The one check of an options bag: `options` must be an object, every own
 * key must be an option of `rules`, and every option that is not undefined
 * must pass its rule. Returns `options`; throws INVALID_ARGUMENT with field
 * `options` or `options.<key>`. Allocates nothing when the bag is good (hot
 * paths such as allocWebGPU call it on every call).
 */
export function checkOptions<T>(options: T, fn: string, rules: OptionRules): T & object {
  if (options === null || typeof options !== "object") {
    const keys = Object.keys(rules);
    requireObject(options, "options", `an object {${keys.map((k) => `${k}?`).join(", ")}}`, `bad ${fn} options`);
  }
  const given = options as T & Record<string, unknown>;
  for (const key in given) {
    if (!Object.hasOwn(given, key)) continue;
    const rule = Object.hasOwn(rules, key) ? rules[key] : undefined;
    if (rule === undefined) checkOptionKeys(given, fn, Object.keys(rules));
    const value = given[key];
    if (value !== undefined && !rule!.accepts(value)) {
      throw new WebDLPackError("INVALID_ARGUMENT", `bad ${fn} option`, {
        field: `options.${key}`,
        value: describeValue(value),
        expected: rule!.expected,
      });
    }
  }
  return given;
}

/**
 * Throw INVALID_ARGUMENT naming `options.<key>` (its value, and the known
 * keys as what was expected) for the first key of `options` not in `known`.
 */
export function checkOptionKeys(options: object, fn: string, known: readonly string[]): void {
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) {
      throw new WebDLPackError("INVALID_ARGUMENT", `unknown ${fn} option`, {
        field: `options.${key}`,
        value: describeValue((options as Record<string, unknown>)[key]),
        expected: `one of the options ${known.join(", ")}`,
      });
    }
  }
}

/**
 * `limits` (undefined, or an object of some of `base`'s keys, each a safe
 * integer >= 0) merged over a copy of `base`. Throws INVALID_ARGUMENT naming
 * `field` or `field.<key>` (`what` names one entry in messages, e.g. "cache limit").
 */
export function mergeCountLimits<T extends object>(base: Readonly<T>, limits: unknown, field: string, what: string): T {
  const out = { ...base } as T;
  if (limits === undefined) return out;
  const keys = Object.keys(base);
  requireObject(limits, field, `an object {${keys.map((k) => `${k}?`).join(", ")}}`, `bad ${what}s`);
  for (const [key, value] of Object.entries(limits)) {
    if (!keys.includes(key)) {
      throw new WebDLPackError("INVALID_ARGUMENT", `unknown ${what} "${key}"`, {
        field: `${field}.${key}`,
        value: describeValue(value),
        expected: `one of ${keys.join(", ")}`,
      });
    }
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", `bad ${what}`, {
        field: `${field}.${key}`,
        value: describeValue(value),
        expected: "a safe integer >= 0",
      });
    }
    (out as Record<string, number>)[key] = value;
  }
  return out;
}
