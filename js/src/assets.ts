/**
 * Files webdlpack ships with its JS: the Python wheel for Pyodide and
 * the C side module. How a page finds them, in this order:
 *
 * 1. an explicit URL (`wheelURL` / `url` options), or `assetBase`: a folder
 *    (URL) holding `python/<wheel>` and `wasm/libwebdlpack.so`, the layout of
 *    the package's `js/dist/` — for apps that copy the files themselves;
 * 2. the copies embedded in the package, once the app opted in with
 *    `useEmbeddedAssets()` from `webdlpack/embedded` (embedded.ts): no request;
 * 3. next to this module: `new URL("./python/…", import.meta.url)`, written as
 *    literals so bundlers that understand the pattern (Vite, Rollup with its
 *    URL plugin, webpack 5, Parcel) copy the files into the build and rewrite
 *    the URL; unbundled (`js/dist/` served as is) it is the shipped file.
 *    esbuild keeps the URL as written, next to the bundle: copy the package's
 *    `js/dist/python` and `js/dist/wasm` there, or use (1) or (2).
 *
 * The embedded copies are never reached otherwise, so a bundler ships each file
 * once: as a file (3), or inside the app's JS (2) — never both (docs/bundlers.md).
 * A file is accepted only if its first bytes are right (a zip for the wheel,
 * `\0asm` for the side module), so a dev server answering 200 with an HTML page
 * for a missing path is an error naming the fixes, not HTML installed as a wheel.
 * An explicit URL or `assetBase` that fails is an error, never a fallback.
 */
import { WebDLPackError } from "./errors.js";

/** Version of the Python wheel this JS build ships with (the wheel name below must stay literal). */
export const PYTHON_PACKAGE_VERSION = "0.1.0";

/**
 * File name of the Pyodide wheel: one wheel tagged for every Pyodide ABI webdlpack supports (made by
 * scripts/build_pyodide_wheel.py from pyproject.toml's list; scripts/embed-assets.mjs checks the two agree).
 */
export const PYTHON_WHEEL_FILENAME =
  "webdlpack-0.1.0-cp312-abi3-pyodide_2024_0_wasm32.pyodide_2025_0_wasm32.pyemscripten_2025_0_wasm32.pyemscripten_2026_0_wasm32.pyemscripten_2026_5_wasm32.whl";

/** File name of the C side module. */
export const C_LIBRARY_FILENAME = "libwebdlpack.so";

/** Which shipped file: the Python wheel or the C side module. */
export type AssetKind = "wheel" | "clib";

/** Where each file sits under an asset base (the layout of the package's js/dist/). */
export const ASSET_PATHS: Readonly<Record<AssetKind, string>> = Object.freeze({
  wheel: `python/${PYTHON_WHEEL_FILENAME}`,
  clib: `wasm/${C_LIBRARY_FILENAME}`,
});

/** URL of the wheel shipped in js/dist/python/ (a literal bundlers rewrite). */
export function defaultWheelURL(): URL {
  return new URL(
    "./python/webdlpack-0.1.0-cp312-abi3-pyodide_2024_0_wasm32.pyodide_2025_0_wasm32.pyemscripten_2025_0_wasm32.pyemscripten_2026_0_wasm32.pyemscripten_2026_5_wasm32.whl",
    import.meta.url,
  );
}

/** URL of the C side module shipped in js/dist/wasm/ (a literal bundlers rewrite). */
export function defaultCLibraryURL(): URL {
  return new URL("./wasm/libwebdlpack.so", import.meta.url);
}

/** Options that say where the shipped files are. */
export interface AssetOptions {
  /**
   * A folder (absolute URL, or relative to the page) holding `python/<wheel>`
   * and `wasm/libwebdlpack.so`, e.g. where the app copied the package's
   * `js/dist/python` and `js/dist/wasm`. Default: next to webdlpack's module,
   * else the embedded copy.
   */
  assetBase?: string | URL;
}

/** What {@link loadAssetBytes} found. */
export interface LoadedAsset {
  /** The file's bytes. */
  bytes: Uint8Array;
  /** Where they came from: a URL, or `"embedded"`. */
  source: string;
}

const MAGIC: Readonly<Record<AssetKind, readonly number[]>> = {
  wheel: [0x50, 0x4b, 0x03, 0x04], // "PK\3\4": a zip
  clib: [0x00, 0x61, 0x73, 0x6d], // "\0asm": a wasm module
};

/** What each file is, for messages. */
const KIND_LABEL: Readonly<Record<AssetKind, string>> = { wheel: "wheel (zip)", clib: "wasm module" };

function hasMagic(kind: AssetKind, bytes: Uint8Array): boolean {
  return MAGIC[kind].every((b, i) => bytes[i] === b);
}

function defaultURL(kind: AssetKind): URL {
  return kind === "wheel" ? defaultWheelURL() : defaultCLibraryURL();
}

/** The base of the page (for relative asset URLs); undefined outside documents and workers. */
function pageBase(): string | undefined {
  const loc = (globalThis as { location?: { href?: unknown } }).location;
  return typeof loc?.href === "string" ? loc.href : undefined;
}

/** `assetBase` + the file's path, with a trailing slash added to the base. */
export function assetURL(kind: AssetKind, assetBase: string | URL): URL {
  const raw = String(assetBase);
  let base: URL;
  try {
    base = new URL(raw.endsWith("/") ? raw : `${raw}/`, pageBase());
  } catch (cause) {
    throw new WebDLPackError("INVALID_ARGUMENT", "assetBase is not a URL", {
      field: "assetBase",
      value: raw,
      expected: "an absolute URL or one relative to the page",
      cause,
    });
  }
  return new URL(ASSET_PATHS[kind], base);
}

type Fetched = { bytes: Uint8Array } | { why: string };

/** Node has no fetch for file: URLs (webdlpack loaded from disk, e.g. Pyodide under Node): read the file. */
async function readFileURL(url: string): Promise<Uint8Array> {
  const fsModule = "node:fs/promises"; // not a literal: bundlers for the web leave it alone
  const fs = (await import(/* @vite-ignore */ /* webpackIgnore: true */ fsModule)) as {
    readFile(path: URL): Promise<Uint8Array>;
  };
  return new Uint8Array(await fs.readFile(new URL(url)));
}

async function fetchBytes(kind: AssetKind, url: URL | string): Promise<Fetched> {
  if (String(url).startsWith("file:")) {
    try {
      const bytes = await readFileURL(String(url));
      return hasMagic(kind, bytes) ? { bytes } : { why: `not a ${KIND_LABEL[kind]}` };
    } catch (err) {
      return { why: `read failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }
  let response: Response;
  try {
    response = await fetch(String(url));
  } catch (err) {
    return { why: `fetch failed: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (!response.ok) return { why: `HTTP ${response.status}` };
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (!hasMagic(kind, bytes)) return { why: `not a ${KIND_LABEL[kind]} (${bytes.length} bytes)` };
  return { bytes };
}

/** The embedded copies as base64, once `useEmbeddedAssets()` (webdlpack/embedded) handed them over. */
let embedded: { readonly [K in AssetKind]: string } | undefined;

/**
 * Make {@link loadAssetBytes} use `data` (base64 of each file) when no explicit location is given; undefined
 * turns that off. Apps call `useEmbeddedAssets()` from `webdlpack/embedded`, which passes the package's copies.
 */
export function provideEmbeddedAssets(data: { readonly [K in AssetKind]: string } | undefined): void {
  embedded = data;
}

function embeddedBytes(kind: AssetKind): Uint8Array | undefined {
  if (embedded === undefined) return undefined;
  const text = atob(embedded[kind]);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return hasMagic(kind, bytes) ? bytes : undefined;
}

/**
 * The bytes of a shipped file: from `url` if given, else from `assetBase`,
 * else the embedded copy if the app opted in, else next to this module (see
 * the file comment). Throws INVALID_ARGUMENT naming the option (`field`) and
 * URL when an explicit location fails, or when the file is not next to the module.
 */
export async function loadAssetBytes(
  kind: AssetKind,
  options: AssetOptions & { url?: string | URL; field?: string } = {},
): Promise<LoadedAsset> {
  const explicit =
    options.url !== undefined
      ? { url: String(options.url), field: options.field ?? "url" }
      : options.assetBase !== undefined
        ? { url: assetURL(kind, options.assetBase).href, field: "assetBase" }
        : undefined;
  if (explicit) {
    const got = await fetchBytes(kind, explicit.url);
    if ("bytes" in got) return { bytes: got.bytes, source: explicit.url };
    throw new WebDLPackError("INVALID_ARGUMENT", `could not load webdlpack's ${ASSET_PATHS[kind]}: ${got.why}`, {
      field: explicit.field,
      value: explicit.url,
      expected: `a URL answering 200 with ${ASSET_PATHS[kind]}`,
    });
  }
  const inline = embeddedBytes(kind);
  if (inline) return { bytes: inline, source: "embedded" };
  const url = defaultURL(kind);
  const got = await fetchBytes(kind, url);
  if ("bytes" in got) return { bytes: got.bytes, source: url.href };
  throw new WebDLPackError(
    "INVALID_ARGUMENT",
    `webdlpack's ${ASSET_PATHS[kind]} is not next to its module (${got.why}): the bundler left it behind ` +
      "(esbuild does). Copy the package's js/dist/python and js/dist/wasm next to the bundle, or pass assetBase " +
      "naming where they are, or call useEmbeddedAssets() from 'webdlpack/embedded' once (docs/bundlers.md)",
    {
      field: "assetBase",
      value: url.href,
      expected:
        "python/ and wasm/ next to the bundle, assetBase naming a folder with them, or useEmbeddedAssets() first",
    },
  );
}
