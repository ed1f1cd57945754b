/**
 * Does a webdlpack wheel fit the running Pyodide? Checked before anything is installed: the wheel's own tags
 * (its `*.dist-info/WHEEL`, read from the zip here) against this Pyodide's platform tag and Python version, the
 * way micropip decides. A wheel for another Pyodide ABI (or another Python) is refused with VERSION_MISMATCH
 * naming both sides, never unpacked into site-packages. The platform tag follows Pyodide's own naming (0.29 and
 * later: `pyemscripten_<PYEMSCRIPTEN_PLATFORM_VERSION>_wasm32`, before: `pyodide_<PYODIDE_ABI_VERSION>_wasm32`),
 * as py/webdlpack/core/host.py's PLATFORM_TAG does once the package is installed.
 */
import { WebDLPackError } from "../errors.js";
import type { PyodideLike, PyProxyLike } from "./pyodide-types.js";

/** What the check found. */
export interface WheelFit {
  /** One of the wheel's tags takes this Pyodide. */
  fits: boolean;
  /** This Pyodide's platform tag, e.g. `pyemscripten_2026_0_wasm32`. */
  platform: string;
  /** Its Python version, e.g. `3.14.2`. */
  python: string;
  /** The wheel's tags, e.g. `cp312-abi3-pyodide_2024_0_wasm32`. */
  tags: string[];
}

const EOCD = 0x06054b50; // end of central directory
const CENTRAL = 0x02014b50; // central directory file header
const LOCAL = 0x04034b50; // local file header

/** Inflate a zip entry: the web's DecompressionStream, else (Node before 20.12 lacks "deflate-raw") node:zlib. */
async function inflateRaw(data: Uint8Array): Promise<Uint8Array> {
  let inflater: DecompressionStream;
  try {
    inflater = new DecompressionStream("deflate-raw");
  } catch {
    const zlibModule = "node:zlib"; // not a literal: bundlers for the web leave it alone
    const zlib = (await import(/* @vite-ignore */ /* webpackIgnore: true */ zlibModule)) as {
      inflateRawSync(data: Uint8Array): Uint8Array;
    };
    return new Uint8Array(zlib.inflateRawSync(data));
  }
  const stream = new Blob([data as BlobPart]).stream().pipeThrough(inflater);
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/** The bytes of the first entry whose name `match`es in the zip `bytes`, or undefined (not a zip, no such entry). */
async function zipEntry(bytes: Uint8Array, match: (name: string) => boolean): Promise<Uint8Array | undefined> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let end = bytes.length - 22;
  while (end >= 0 && view.getUint32(end, true) !== EOCD) end--;
  if (end < 0) return undefined;
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  for (let i = 0; i < count && at + 46 <= bytes.length && view.getUint32(at, true) === CENTRAL; i++) {
    const method = view.getUint16(at + 10, true);
    const size = view.getUint32(at + 20, true);
    const nameLength = view.getUint16(at + 28, true);
    const skip = nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    const name = new TextDecoder().decode(bytes.subarray(at + 46, at + 46 + nameLength));
    const local = view.getUint32(at + 42, true);
    at += 46 + skip;
    if (!match(name) || local + 30 > bytes.length || view.getUint32(local, true) !== LOCAL) continue;
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    const data = bytes.subarray(start, start + size);
    if (method === 0) return data;
    if (method === 8) return inflateRaw(data);
  }
  return undefined;
}

/** The `Tag:` lines of the wheel's `<name>.dist-info/WHEEL` (empty when it has none). */
export async function wheelTags(wheel: Uint8Array): Promise<string[]> {
  const meta = await zipEntry(wheel, (name) => /^[^/]+\.dist-info\/WHEEL$/.test(name));
  if (meta === undefined) return [];
  return new TextDecoder()
    .decode(meta)
    .split(/\r?\n/)
    .filter((line) => line.startsWith("Tag:"))
    .map((line) => line.slice(4).trim());
}

/** Whether `tag` (possibly compressed, `a.b-c-d.e`) takes a Python `3.minor` on `platform`, as micropip decides. */
export function tagFits(tag: string, platform: string, minor: number): boolean {
  const parts = tag.split("-");
  if (parts.length !== 3) return false;
  const [pythons, abis, platforms] = parts.map((p) => p.split(".")) as [string[], string[], string[]];
  if (!platforms.includes("any") && !platforms.includes(platform)) return false;
  return pythons.some((py) =>
    abis.some((abi) => {
      if ((py === "py3" || py === `py3${minor}`) && abi === "none") return true;
      const cp = /^cp3(\d+)$/.exec(py);
      if (cp === null) return false;
      return (abi === "abi3" && Number(cp[1]) <= minor) || (abi === py && Number(cp[1]) === minor);
    }),
  );
}

/** This Pyodide's platform tag and Python version, from `sysconfig` and `platform` (no Python source run). */
function runningPython(pyodide: PyodideLike): { platform: string; python: string } {
  const sysconfig = pyodide.pyimport("sysconfig");
  const platformModule = pyodide.pyimport("platform");
  try {
    const config = sysconfig.get_config_var as (name: string) => unknown;
    const pyemscripten = config("PYEMSCRIPTEN_PLATFORM_VERSION");
    const platform = pyemscripten
      ? `pyemscripten_${String(pyemscripten)}_wasm32`
      : `pyodide_${String(config("PYODIDE_ABI_VERSION"))}_wasm32`;
    return { platform, python: String((platformModule.python_version as () => unknown)()) };
  } finally {
    for (const m of [sysconfig, platformModule] as PyProxyLike[]) m.destroy();
  }
}

/** What {@link checkWheelFits} finds for `wheel` in `pyodide`. */
export async function wheelFit(pyodide: PyodideLike, wheel: Uint8Array): Promise<WheelFit> {
  const { platform, python } = runningPython(pyodide);
  const tags = await wheelTags(wheel);
  const minor = Number(python.split(".")[1]);
  return { fits: tags.some((t) => tagFits(t, platform, minor)), platform, python, tags };
}

/**
 * Throw VERSION_MISMATCH unless `wheel` fits this Pyodide.
 *
 * @param source Where the wheel came from (its URL, or "embedded"): the error's `value`.
 * @param field The option that chose it (`wheelURL`, `assetBase`), the error's `field`.
 */
export async function checkWheelFits(
  pyodide: PyodideLike,
  wheel: Uint8Array,
  source: string,
  field: string,
): Promise<void> {
  const fit = await wheelFit(pyodide, wheel);
  if (fit.fits) return;
  const tags = fit.tags.length > 0 ? fit.tags.join(", ") : "no tags (no .dist-info/WHEEL)";
  throw new WebDLPackError(
    "VERSION_MISMATCH",
    `this webdlpack wheel does not fit Pyodide ${pyodide.version} (${fit.platform}, Python ${fit.python}): it is tagged ${tags}`,
    {
      field,
      value: source,
      expected: `a wheel tagged for ${fit.platform} (webdlpack's own wheel covers each Pyodide ABI it supports)`,
    },
  );
}
