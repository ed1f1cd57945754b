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

/**
 * Check the options bag of `fn` against `rules`: it must be an object, every
 * key must be a known option, and every option that is not undefined must
 * pass its rule. Throws INVALID_ARGUMENT with field `options` or `options.<key>`.
 */
export function checkOptions(options: unknown, fn: string, rules: Readonly<Record<string, OptionRule>>): void {
  const keys = Object.keys(rules);
  requireObject(options, "options", `an object {${keys.map((k) => `${k}?`).join(", ")}}`, `bad ${fn} options`);
  checkOptionKeys(options, fn, keys);
  const given = options as Record<string, unknown>;
  for (const key of Object.keys(given)) {
    const rule = rules[key]!;
    const value = given[key];
    if (value !== undefined && !rule.accepts(value)) {
      throw new WebDLPackError("INVALID_ARGUMENT", `bad ${fn} option`, {
        field: `options.${key}`,
        value: describeValue(value),
        expected: rule.expected,
      });
    }
  }
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
