/**
 * Files webdlpack ships with its JS: the Python wheel for Pyodide and
 * the C side module. How a page finds them, in this order:
 *
 * 1. an explicit URL (`wheelURL` / `url` options), or `assetBase`: a folder
 *    (URL) holding `python/<wheel>` and `wasm/libwebdlpack.so`, the layout of
 *    the package's `js/dist/` — for apps that copy the files themselves;
 * 2. next to this module: `new URL("./python/…", import.meta.url)`, written as
 *    literals so bundlers that understand the pattern (Vite, Rollup with its
 *    URL plugin, webpack 5, Parcel) copy the files into the build and rewrite
 *    the URL; unbundled (`js/dist/` served as is) it is the shipped file;
 * 3. when (2) does not answer with the file (esbuild keeps the URL as written,
 *    so it points next to the bundle, where nothing is): the copy embedded in
 *    `assets-embedded.js` (made by `make` from the same files), loaded only then
 *    through a dynamic import, which every bundler includes.
 *
 * A file is accepted only if its first bytes are right (a zip for the wheel,
 * `\0asm` for the side module), so a dev server answering 200 with an HTML
 * page for a missing path falls through to (3) instead of installing HTML.
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

/** Where each file sits under an asset base (the layout of the package's js/dist/). */
export const ASSET_PATHS = Object.freeze({
  wheel: `python/${PYTHON_WHEEL_FILENAME}`,
  clib: `wasm/${C_LIBRARY_FILENAME}`,
});

/** Which shipped file. */
export type AssetKind = keyof typeof ASSET_PATHS;

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

async function embeddedBytes(kind: AssetKind): Promise<Uint8Array | undefined> {
  let data: { readonly [K in AssetKind]: string };
  try {
    data = (await import("./assets-embedded.js")).EMBEDDED_ASSETS;
  } catch {
    return undefined;
  }
  const text = atob(data[kind]);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return hasMagic(kind, bytes) ? bytes : undefined;
}

/**
 * The bytes of a shipped file: from `url` if given, else from `assetBase`,
 * else next to this module, else the embedded copy (see the file comment).
 * Throws INVALID_ARGUMENT naming the option (`field`) and URL when an explicit
 * location fails, or when no default location has the file.
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
  const url = defaultURL(kind);
  const got = await fetchBytes(kind, url);
  if ("bytes" in got) return { bytes: got.bytes, source: url.href };
  const embedded = await embeddedBytes(kind);
  if (embedded) return { bytes: embedded, source: "embedded" };
  throw new WebDLPackError(
    "INVALID_ARGUMENT",
    `webdlpack's ${ASSET_PATHS[kind]} is neither next to its module (${got.why}) nor embedded`,
    {
      field: "assetBase",
      value: url.href,
      expected:
        "assetBase naming a folder with python/ and wasm/ (copies of the package's js/dist/python and js/dist/wasm)",
    },
  );
}
