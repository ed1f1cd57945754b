/**
 * Does a webdlpack wheel fit the running Pyodide? Checked before anything is installed: the wheel's own tags
 * (its `*.dist-info/WHEEL`) against this Pyodide's platform tag and Python version, the way micropip decides.
 * A wheel for another Pyodide ABI (or another Python) is refused with VERSION_MISMATCH naming both sides,
 * never unpacked into site-packages. The platform tag follows Pyodide's own naming (0.29 and later:
 * `pyemscripten_<PYEMSCRIPTEN_PLATFORM_VERSION>_wasm32`, before: `pyodide_<PYODIDE_ABI_VERSION>_wasm32`), as
 * py/webdlpack/core/host.py's PLATFORM_TAG does once the package is installed.
 */
import { WebDLPackError } from "../errors.js";
import type { PyodideLike } from "./pyodide-types.js";

/** What the check found (the Python program below returns it as JSON). */
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

/** Reads the wheel bytes Python holds as `__webdlpack_wheel` (a JS Uint8Array proxy); its last line is the JSON. */
const CHECK_PROGRAM = `
def __webdlpack_wheel_fit():
    import io, json, sys, sysconfig, zipfile
    wheel = zipfile.ZipFile(io.BytesIO(__webdlpack_wheel.to_bytes()))
    meta = [n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/WHEEL")]
    text = wheel.read(meta[0]).decode() if len(meta) == 1 else ""
    tags = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Tag:")]
    version = sysconfig.get_config_var("PYEMSCRIPTEN_PLATFORM_VERSION")
    platform = f"pyemscripten_{version}_wasm32" if version else f"pyodide_{sysconfig.get_config_var('PYODIDE_ABI_VERSION')}_wasm32"
    minor = sys.version_info[1]

    def fits(tag):
        parts = tag.split("-")
        if len(parts) != 3:
            return False
        pythons, abis, platforms = (p.split(".") for p in parts)
        if "any" not in platforms and platform not in platforms:
            return False
        for py in pythons:
            for abi in abis:
                if py in ("py3", f"py3{minor}") and abi == "none":
                    return True
                if py.startswith("cp3") and py[3:].isdigit():
                    if (abi == "abi3" and int(py[3:]) <= minor) or (abi == py and int(py[3:]) == minor):
                        return True
        return False

    return json.dumps({"fits": any(fits(t) for t in tags), "platform": platform,
                       "python": sys.version.split()[0], "tags": tags})
__webdlpack_wheel_fit()
`;

/** What {@link checkWheelFits} found in the wheel Python holds as `__webdlpack_wheel`. */
export function wheelFit(pyodide: PyodideLike): WheelFit {
  try {
    return JSON.parse(String(pyodide.runPython(CHECK_PROGRAM))) as WheelFit;
  } finally {
    pyodide.runPython("del __webdlpack_wheel_fit");
  }
}

/**
 * Throw VERSION_MISMATCH unless the wheel Python holds as `__webdlpack_wheel` fits this Pyodide.
 *
 * @param source Where the wheel came from (its URL, or "embedded"): the error's `value`.
 * @param field The option that chose it (`wheelURL`, `assetBase`), the error's `field`.
 */
export function checkWheelFits(pyodide: PyodideLike, source: string, field: string): void {
  const fit = wheelFit(pyodide);
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
