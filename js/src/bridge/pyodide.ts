/**
 * The JS half of the Python bridge: installs the `webdlpack` Python package
 * into a running Pyodide and registers the JS module (`webdlpack_js`) that the
 * Python side calls. Tensors cross as addresses of DLManagedTensorVersioned
 * structs in the wasm heap, so nothing is copied when the bytes already live
 * there; ownership follows the DLPack contract (the receiver calls the deleter
 * exactly once).
 *
 *   const py = await loadWebDLPack(pyodide);
 *   const t = py.fromPython(pyodide.runPython("webdlpack.zeros((2, 3), 'float32')"));
 *   t.view;                       // Float32Array over the same bytes in the heap
 *   const back = py.toPython(t);  // a webdlpack.Tensor PyProxy, same bytes
 */
import { checkOptions, URL_OPTION, type OptionRule } from "../arguments.js";
import { loadAssetBytes, PYTHON_WHEEL_FILENAME, type AssetOptions } from "../assets.js";
import type { WasmHost } from "../dlpack/index.js";
import { WebDLPackError } from "../errors.js";
import { registerPythonHandoff } from "../context/python-handoff.js";
import { Tensor } from "../tensor/index.js";
import { exportForPython, registerPythonModule, VERSIONED } from "./pyodide-module.js";
import { checkPyodideInstance } from "./pyodide-instance.js";
import { checkPyodideVersion } from "./pyodide-version.js";
import type { PyodideLike, PyodideWithModule, PyProxyLike } from "./pyodide-types.js";
import { checkWheelFits } from "./wheel-fit.js";

export { PYTHON_JS_MODULE } from "./pyodide-module.js";

/** Options of {@link loadWebDLPack}. */
export interface LoadWebDLPackOptions extends AssetOptions {
  /**
   * The wheel to install. Default: the one shipped with the package, found as
   * assets.ts says — `assetBase` if given, else next to webdlpack's module
   * (bundlers that understand `new URL(…, import.meta.url)` copy it), else the
   * copy embedded in the package (esbuild): no option is needed after bundling.
   */
  wheelURL?: string | URL;
  /**
   * How to install it: `"loadPackage"` (default; the wheel is unpacked into
   * site-packages, no extra packages) or `"micropip"`
   * (`micropip.install` from Pyodide's file system; micropip must be
   * loadable: give `micropipURL` offline).
   */
  installer?: "loadPackage" | "micropip";
  /** URL of a micropip wheel, loaded first when `installer` is `"micropip"`. */
  micropipURL?: string | URL;
}

/** What {@link loadWebDLPack} returns: the bridge bound to one Pyodide. */
export interface WebDLPackPython {
  readonly pyodide: PyodideLike;
  /** The wasm heap of this Pyodide, as webdlpack's codec sees it. */
  readonly host: WasmHost;
  /** Version of the installed Python package. */
  readonly pythonVersion: string;
  /** Where the installed wheel came from: its URL, or "embedded" (the copy in the package, see assets.ts). */
  readonly wheelSource: string;
  /** What runs in this Pyodide: Python's `webdlpack.info()` (native or pure-Python exchange, versions, why). */
  readonly info: PythonInfo;
  /**
   * Hand a JS tensor to Python: returns a `webdlpack.Tensor` (PyProxy) over
   * the same bytes when they live in the heap (zero-copy), else over a copy
   * with IS_COPIED set. The JS tensor stays valid; Python's reference keeps
   * the bytes alive until Python drops it.
   */
  toPython(tensor: Tensor, options?: { copy?: boolean }): PyProxyLike;
  /** Take a Python DLPack producer (webdlpack.Tensor, a NumPy array, …) as a JS tensor, zero-copy. */
  fromPython(obj: unknown): Tensor;
}

/** Python's `webdlpack.info()` as JS: which implementation runs in this Pyodide, and why a fallback happened. */
export interface PythonInfo {
  /** `"pyodide"` here (`"cpython"` natively). */
  readonly host: string;
  /** Python's version, e.g. `3.14.2`. */
  readonly python: string;
  /** Pyodide's version, e.g. `314.0.7`. */
  readonly pyodide: string | null;
  /** The wheel platform tag this Pyodide takes, e.g. `pyemscripten_2026_0_wasm32`. */
  readonly platform: string;
  /** `"native"`: the C module exports and calls deleters; `"python"`: the pure-Python fallback does. */
  readonly exchange: "native" | "python";
  /** `"native"`, or `"none"` (dropped capsules are freed later, by Python). */
  readonly capsule_destructor: "native" | "none";
  /** For each native library not loaded, why (empty when both run). */
  readonly fallback: Readonly<Record<string, string>>;
  readonly [key: string]: unknown;
}

const bridges = new WeakMap<object, Promise<WebDLPackPython>>();
/** Where the installed wheel came from (a URL, or "embedded"), per Pyodide: see {@link WebDLPackPython.wheelSource}. */
async function install(pyodide: PyodideWithModule, options: LoadWebDLPackOptions): Promise<string> {
  const wheel = await loadAssetBytes("wheel", {
    ...(options.wheelURL !== undefined ? { url: options.wheelURL, field: "wheelURL" } : {}),
    ...(options.assetBase !== undefined ? { assetBase: options.assetBase } : {}),
  });
  // A wheel for another Pyodide ABI is refused here, before anything is unpacked (wheel-fit.ts).
  await checkWheelFits(pyodide, wheel.bytes, wheel.source, options.wheelURL !== undefined ? "wheelURL" : "assetBase");
  if ((options.installer ?? "loadPackage") === "loadPackage") unpackWheel(pyodide, wheel.bytes);
  else await micropipInstall(pyodide, wheel.bytes, options.micropipURL);
  return wheel.source;
}

/**
 * Unpack the wheel into site-packages with Pyodide's own unpacker (a wheel is
 * a zip of the package), then let Python's import system see it. Python is
 * called as objects from JS, never as source text.
 */
function unpackWheel(pyodide: PyodideWithModule, bytes: Uint8Array): void {
  const sysconfig = pyodide.pyimport("sysconfig");
  const importlib = pyodide.pyimport("importlib");
  try {
    const purelib = String((sysconfig.get_path as (name: string) => unknown)("purelib"));
    pyodide.unpackArchive(bytes, "whl", { extractDir: purelib });
    (importlib.invalidate_caches as () => void)();
  } finally {
    sysconfig.destroy();
    importlib.destroy();
  }
}

/** Install the wheel with micropip (loaded from `micropipURL` when given), from Pyodide's file system under the wheel's own name. */
async function micropipInstall(
  pyodide: PyodideWithModule,
  bytes: Uint8Array,
  micropipURL: string | URL | undefined,
): Promise<void> {
  if (micropipURL) await pyodide.loadPackage(String(micropipURL), { messageCallback: () => undefined });
  // micropip installs from Pyodide's file system (emfs:) under the wheel's own name, whatever URL the bytes came from.
  const dir = "/tmp/webdlpack-wheel";
  pyodide._module.FS.mkdirTree(dir);
  pyodide._module.FS.writeFile(`${dir}/${PYTHON_WHEEL_FILENAME}`, bytes);
  const micropip = pyodide.pyimport("micropip");
  try {
    const install = micropip.install as { callKwargs(...args: unknown[]): Promise<unknown> };
    await install.callKwargs(`emfs:${dir}/${PYTHON_WHEEL_FILENAME}`, { deps: false });
  } finally {
    micropip.destroy();
  }
}

async function load(pyodide: PyodideWithModule, options: LoadWebDLPackOptions): Promise<WebDLPackPython> {
  const host = registerPythonModule(pyodide);
  let wheelSource: string;
  try {
    wheelSource = await install(pyodide, options);
  } catch (cause) {
    if (cause instanceof WebDLPackError) throw cause; // the wheel was not found: the error names the option and URL
    throw new WebDLPackError("INVALID_ARGUMENT", "could not install the webdlpack Python wheel", {
      field: options.wheelURL !== undefined ? "wheelURL" : "installer",
      value: options.wheelURL !== undefined ? String(options.wheelURL) : (options.installer ?? "loadPackage"),
      expected: "a webdlpack wheel Pyodide can install (run `make js`, which copies it to js/dist/python/)",
      cause,
    });
  }
  const exchange = pyodide.pyimport("webdlpack.api.managed");
  const pkg = pyodide.pyimport("webdlpack");
  const pythonVersion = String(pkg.__version__);
  const infoProxy = (pkg.info as () => PyProxyLike)();
  const info = (infoProxy.toJs as (o: object) => PythonInfo)({ dict_converter: Object.fromEntries });
  infoProxy.destroy();
  pkg.destroy();
  const importManaged = exchange.import_managed as (address: number, versioned: boolean) => PyProxyLike;
  const exportManaged = exchange.export_managed as (obj: unknown) => number; // versioned by default
  const bridge: WebDLPackPython = {
    pyodide,
    host,
    pythonVersion,
    wheelSource,
    info,
    toPython(tensor: Tensor, opts: { copy?: boolean } = {}) {
      const address = exportForPython(host, tensor, true, opts.copy);
      return importManaged(address, true);
    },
    fromPython(obj: unknown) {
      const address = exportManaged(obj) >>> 0; // one argument: fewer to convert on the way into Python
      return Tensor.fromManaged(host, address, VERSIONED);
    },
  };
  // `tensor.toPython()` finds this bridge through the page-wide list.
  registerPythonHandoff({ pyodide, toPython: (t: Tensor, opts) => bridge.toPython(t, opts), info });
  return bridge;
}

const PYODIDE_MEMBERS = [
  "_module",
  "version",
  "runPython",
  "runPythonAsync",
  "registerJsModule",
  "loadPackage",
  "pyimport",
  "unpackArchive",
  "globals",
] as const;

/** The options {@link loadWebDLPack} knows, and what each accepts. */
const LOAD_OPTION_RULES: Readonly<Record<keyof LoadWebDLPackOptions, OptionRule>> = {
  wheelURL: URL_OPTION,
  assetBase: URL_OPTION,
  installer: {
    accepts: (v) => v === "loadPackage" || v === "micropip",
    expected: '"loadPackage" (default) or "micropip"',
  },
  micropipURL: URL_OPTION,
};

/**
 * Install webdlpack into a running Pyodide and connect it to the page's
 * context. Idempotent per Pyodide instance (concurrent calls share one load).
 * Rejects with INVALID_ARGUMENT (naming the field) when `pyodide` is not a
 * Pyodide instance or an option is unknown or malformed, and UNSUPPORTED when its
 * version is outside the supported range (bridge/pyodide-version.ts), before starting anything.
 */
export function loadWebDLPack(pyodide: PyodideLike, options: LoadWebDLPackOptions = {}): Promise<WebDLPackPython> {
  try {
    checkPyodideInstance<PyodideWithModule>(pyodide, PYODIDE_MEMBERS, "loadWebDLPack");
    checkPyodideVersion(pyodide.version, "loadWebDLPack");
    checkOptions(options, "loadWebDLPack", LOAD_OPTION_RULES);
  } catch (err) {
    return Promise.reject(err);
  }
  let bridge = bridges.get(pyodide);
  if (!bridge) {
    bridge = load(pyodide, options);
    bridges.set(pyodide, bridge);
    bridge.catch(() => bridges.delete(pyodide));
  }
  return bridge;
}
