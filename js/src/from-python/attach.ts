/**
 * The JS half the Python package brings up itself, for pages whose only code
 * is Python (PyScript, JupyterLite): `import webdlpack` in a Pyodide where no
 * page called `loadWebDLPack` imports this module (shipped inside the wheel,
 * py/webdlpack/bridge/boot.py) and calls {@link attachPython} with Pyodide's
 * API object (`import pyodide_js`). It joins the realm's context — the global
 * record another copy of webdlpack made, or a new one — and registers the
 * `webdlpack_js` module Python calls. Main thread and Worker alike: everything
 * lives in the realm this Pyodide runs in.
 */
import { CONTEXT_GLOBAL_KEY, getContext } from "../context/index.js";
import { registerPythonHandoff } from "../context/python-handoff.js";
import type { PyodideLike, PyodideWithModule, PyProxyLike } from "../bridge/pyodide-types.js";
import { exportForPython, registerPythonModule } from "../bridge/pyodide-module.js";
import { checkPyodideInstance } from "../bridge/pyodide-instance.js";
import type { Tensor } from "../tensor/index.js";
import { pythonFrameworkModule } from "./frameworks.js";

/** What {@link attachPython} did, for Python to report (`webdlpack.js_half()`). */
export interface AttachReport {
  /** True when the realm already had a webdlpack context (another copy made it); false when this call made it. */
  readonly joinedContext: boolean;
  /** The context protocol of the copy that made it, "major.minor". */
  readonly contextProtocol: string;
  /** Main thread ("window") or a Worker ("worker"), or "other" (Node, a worklet). */
  readonly realm: "window" | "worker" | "other";
}

const PYODIDE_MEMBERS = ["_module", "registerJsModule", "pyimport"] as const;

function realmKind(): AttachReport["realm"] {
  const g = globalThis as Record<string, unknown>;
  if (typeof g["window"] === "object" && typeof g["document"] === "object") return "window";
  if (typeof g["WorkerGlobalScope"] === "function" && typeof g["importScripts"] === "function") return "worker";
  return "other";
}

/**
 * Join (or make) the realm's context and register `webdlpack_js` in `pyodide`, with the framework
 * functions of frameworks.ts. Synchronous: the device is set up by {@link setupDevice}. Throws
 * INVALID_ARGUMENT (field `pyodide`) when `pyodide` is not a Pyodide API object, INCOMPATIBLE_CONTEXT when
 * the realm's context was made by an incompatible copy.
 */
export function attachPython(pyodide: PyodideLike): AttachReport {
  checkPyodideInstance<PyodideWithModule>(pyodide, PYODIDE_MEMBERS, "attachPython");
  const joinedContext = (globalThis as unknown as Record<symbol, unknown>)[CONTEXT_GLOBAL_KEY] !== undefined;
  const ctx = getContext();
  const host = registerPythonModule(pyodide, pythonFrameworkModule());
  // `tensor.toPython()` from JS finds this Pyodide too; Python's seam is imported when first used (the package
  // is still importing now).
  let importManaged: ((address: number, versioned: boolean) => PyProxyLike) | undefined;
  let info: Readonly<Record<string, unknown>> | undefined;
  registerPythonHandoff({
    pyodide,
    /** `webdlpack.info()`, read when first asked (pythonRuntimes()), once the package has finished importing. */
    get info() {
      if (info === undefined) {
        const pkg = pyodide.pyimport("webdlpack");
        const proxy = (pkg["info"] as () => PyProxyLike)();
        info = (proxy["toJs"] as (o: object) => Record<string, unknown>)({ dict_converter: Object.fromEntries });
        proxy.destroy();
        pkg.destroy();
      }
      return info;
    },
    toPython: (tensor: never, options: { copy?: boolean }) => {
      if (importManaged === undefined) {
        const seam = pyodide.pyimport("webdlpack.api.managed");
        importManaged = seam["import_managed"] as typeof importManaged;
        seam.destroy();
      }
      return importManaged!(exportForPython(host, tensor as Tensor, true, options.copy), true);
    },
  });
  return Object.freeze({
    joinedContext,
    contextProtocol: `${ctx.protocol.major}.${ctx.protocol.minor}`,
    realm: realmKind(),
  });
}

/**
 * Set up the context's device 0 (`ctx.setup()`; shared with every other caller, a no-op when done).
 * Resolves to the adapter's description; rejects with setup's typed error (NO_WEBGPU where this realm has no
 * `navigator.gpu`, NO_ADAPTER, ...), which Python keeps as the reason its GPU functions give.
 */
export async function setupDevice(): Promise<string> {
  const info = await getContext().setup();
  return `${info.adapterInfo?.vendor ?? "?"} ${info.adapterInfo?.architecture ?? ""}`.trim();
}
