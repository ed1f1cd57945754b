/**
 * How a Tensor is known across copies of webdlpack on one page (an app bundle and a second copy a library
 * brought, two Vite pre-bundled chunks): `instanceof` sees only its own copy's class, so every Tensor also
 * answers to the global symbol `Symbol.for("webdlpack.tensor")` with the version of what it offers other
 * copies (`toManaged` into any wasm host). GPU pointers need nothing more: every copy shares one context.
 */

/** The brand key, the same symbol in every copy and realm. */
export const TENSOR_BRAND: unique symbol = Symbol.for("webdlpack.tensor");

/** What a branded Tensor offers other copies: 1 = `toManaged(host, {versioned, copy, holder})`. */
export const TENSOR_BRAND_VERSION = 1;

/** What a Tensor of another copy must offer for this copy to export it (see {@link TENSOR_BRAND_VERSION}). */
export interface BrandedTensor {
  readonly [TENSOR_BRAND]: number;
  toManaged(host: unknown, options?: object): number;
  dispose(): void;
}

/** Whether `value` is a Tensor of any copy of webdlpack that offers what this one uses. */
export function isBrandedTensor(value: unknown): value is BrandedTensor {
  if (value === null || typeof value !== "object") return false;
  const v = value as Partial<BrandedTensor>;
  return v[TENSOR_BRAND] === TENSOR_BRAND_VERSION && typeof v.toManaged === "function";
}

/** Whether `value` looks like a Tensor of another copy of webdlpack (branded or too old to be). */
export function looksLikeTensor(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  const v = value as Record<string, unknown>;
  return typeof v["toManaged"] === "function" && "dtype" in v && "device" in v && "shape" in v;
}
