/**
 * How values appear in webdlpack's errors — the one formatter every layer
 * uses (internal; not exported from the package): {@link describeValue}
 * picks what an error's `value` holds, {@link valueText} how it reads in
 * the message.
 */

/**
 * A short form of `value` for an error's `value` (internal; the one formatter
 * every layer uses): primitives as they are, a function as `"<function>"`,
 * an object as `"<ConstructorName>"` — never the whole object.
 */
export function describeValue(value: unknown): unknown {
  if (value === null || (typeof value !== "object" && typeof value !== "function")) return value;
  if (typeof value === "function") return "<function>";
  let name: unknown;
  try {
    name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  } catch {
    name = undefined; // a Proxy or getter that throws
  }
  return `<${typeof name === "string" && name !== "" ? name : "object"}>`;
}

/** How an error's `value` reads in its message: strings quoted, bigints with `n`. */
export function valueText(value: unknown): string {
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "string") return JSON.stringify(value);
  try {
    return String(value);
  } catch {
    return "<unprintable>";
  }
}
