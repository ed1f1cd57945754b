/**
 * The framework functions Python's `webdlpack.frameworks` calls (ONNX Runtime
 * Web and TensorFlow.js on the context's shared device), added to
 * `webdlpack_js` by attach.ts. Each takes the framework's namespace as the page
 * loaded it (`from pyscript.js_modules import ort`, `await run_js("import(...)")`)
 * and webdlpack Tensors (Python hands them over with `to_js`), so Python never
 * builds ORT or TF.js objects itself and no byte is copied on the way.
 */
import {
  bindOrtToContext,
  handoffInfo,
  registerTfjsWebGPUBackend,
  tensorFromOrt,
  tensorFromTfjs,
  tensorToTfjs,
  type OrtBinding,
} from "../adapters/index.js";
import type {
  OrtLike,
  OrtSessionOptions,
  OrtTensorLike,
  TfjsLike,
  TfjsTensorLike,
  TfjsWebGPUBackendClass,
} from "../adapters/framework-types.js";
import { getContext } from "../context/index.js";
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { Tensor } from "../tensor/index.js";

/** The parts of an `ort.InferenceSession` used here. */
interface OrtSessionLike {
  readonly inputNames: readonly string[];
  run(feeds: Record<string, OrtTensorLike>): Promise<Record<string, OrtTensorLike>>;
}

/** The `ort` namespace with the session class (the WebGPU build). */
interface OrtWithSessions extends OrtLike {
  readonly InferenceSession: { create(model: unknown, options: OrtSessionOptions): Promise<OrtSessionLike> };
}

/** Sessions made by {@link ortCreateSession}, with the binding their tensors go through. */
const sessionBindings = new WeakMap<object, OrtBinding>();

function feedTensor(name: string, value: unknown): Tensor {
  if (value instanceof Tensor && !value.disposed) return value;
  throw new WebDLPackError("INVALID_ARGUMENT", `feed ${name} is not a live webdlpack Tensor`, {
    field: `feeds[${JSON.stringify(name)}]`,
    value: describeValue(value),
    expected: "a webdlpack Tensor (webdlpack.to_js(x) in Python)",
  });
}

function bindingOf(session: OrtSessionLike, ort: OrtLike | undefined): OrtBinding {
  const known = sessionBindings.get(session);
  if (known !== undefined) return known;
  if (ort == null) {
    throw new WebDLPackError("INVALID_ARGUMENT", "this ORT session was not made by webdlpack; pass the ort namespace", {
      field: "ort",
      value: describeValue(ort),
      expected: "the onnxruntime-web/webgpu namespace the session was made with on the shared device",
    });
  }
  return bindOrtToContext(ort);
}

/** An ORT session on the context's device 0 (outputs stay on the GPU unless `extra` says otherwise). */
async function ortCreateSession(
  ort: OrtWithSessions,
  model: unknown,
  extra?: OrtSessionOptions,
): Promise<OrtSessionLike> {
  const binding = bindOrtToContext(ort);
  const session = await ort.InferenceSession.create(model, binding.sessionOptions(extra ?? {}));
  sessionBindings.set(session, binding);
  return session;
}

/**
 * Run `session` on the feeds `names[i]` → `tensors[i]` (webdlpack Tensors; Python's lists, read before the
 * first await): each input is handed to ORT over its own GPUBuffer (tensorToOrt: no copy when contiguous with
 * STORAGE usage), each output comes back as a webdlpack Tensor adopting ORT's buffer (tensorFromOrt), as
 * `[name, Tensor]` pairs. The ORT input tensors are released after the run.
 */
async function ortRun(
  session: OrtSessionLike,
  names: Iterable<unknown>,
  tensors: Iterable<unknown>,
  ort?: OrtLike,
): Promise<[string, Tensor][]> {
  const keys = [...names].map(String);
  const values = [...tensors];
  const binding = bindingOf(session, ort ?? undefined);
  const inputs: Record<string, OrtTensorLike> = {};
  try {
    for (const [i, name] of keys.entries()) inputs[name] = await binding.tensorToOrt(feedTensor(name, values[i]));
    const outputs = await session.run(inputs);
    return Object.entries(outputs).map(([name, out]): [string, Tensor] => [
      name,
      out.location === "gpu-buffer" ? binding.tensorFromOrt(out) : tensorFromOrt(out),
    ]);
  } finally {
    for (const input of Object.values(inputs)) input.dispose();
  }
}

/** The functions attach.ts adds to `webdlpack_js` (Python: webdlpack/frameworks/). */
export function pythonFrameworkModule(): Record<string, unknown> {
  return {
    /** `{keys[i]: values[i]}`: keyword options from Python (its dicts arrive as proxies, not objects). */
    plainObject: (keys: Iterable<unknown>, values: Iterable<unknown>) => {
      const v = [...values];
      return Object.fromEntries([...keys].map((k, i) => [String(k), v[i]]));
    },
    ortSessionOptions: (ort: OrtLike, extra?: OrtSessionOptions) => bindOrtToContext(ort).sessionOptions(extra ?? {}),
    ortCreateSession,
    ortRun,
    tfjsUseContext: async (tf: TfjsLike, WebGPUBackend: TfjsWebGPUBackendClass) => {
      await registerTfjsWebGPUBackend(tf, WebGPUBackend, getContext());
    },
    tfjsFromTensor: (tf: TfjsLike, tensor: unknown) => tensorToTfjs(tf, feedTensor("tensor", tensor)),
    tfjsToTensor: (tf: TfjsLike, t: TfjsTensorLike) => tensorFromTfjs(tf, t),
    /**
     * How an adapter made a framework tensor: `[zeroCopy, reason]` (the reason for a copy), or undefined. Never
     * null: Pyodide gives Python JS null as `jsnull`, undefined as None.
     */
    handoffInfo: (t: object) => {
      const info = t !== null && typeof t === "object" ? handoffInfo(t) : undefined;
      return info === undefined ? undefined : [info.zeroCopy, info.reason ?? undefined];
    },
  };
}
