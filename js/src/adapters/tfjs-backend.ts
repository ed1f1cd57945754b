/**
 * TensorFlow.js's WebGPU backend on the context's shared GPUDevice: the
 * binding ({@link registerTfjsWebGPUBackend}), the backend a hand-off uses,
 * TF.js as a queue user ({@link flushTfjsFirst}), and the releases that run
 * when TF.js disposes a tensor made from a webdlpack buffer. The tensor
 * hand-offs are in tfjs-to.ts and tfjs-from.ts; the conditions they rely on
 * are listed in tfjs-to.ts.
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { getContext, unwrapDevice, type WebDLPackContext } from "../context/index.js";
import { addQueueUser } from "../context/transfers/queue-users.js";
import type {
  TfjsBackendsLike,
  TfjsDataId,
  TfjsWebGPUBackendClass,
  TfjsWebGPUBackendInternals,
  TfjsWebGPUBackendLike,
} from "./framework-types.js";
import { watchTfjsMemory } from "./memory.js";
import { TFJS_OWNER } from "./producer.js";
import { checkFrameworkVersion } from "./compat/versions.js";

/** Options of {@link registerTfjsWebGPUBackend}. */
export interface RegisterTfjsOptions {
  /** webdlpack device id (default 0; call `ctx.setup()` first). */
  deviceId?: number;
  /** Backend priority for TF.js's automatic choice (default 3, above TF.js's own webgpu). */
  priority?: number;
  /** Make it the active backend with `tf.setBackend(name)` (default true). */
  activate?: boolean;
}

/** Per backend: release callbacks of foreign buffers, keyed by TF.js data id. */
const watched = new WeakMap<object, Map<TfjsDataId, () => void>>();

/**
 * Call `release` once TF.js has let go of `dataId` on `backend` (its last
 * tensor disposed and its pending GPU work submitted), or when the backend is disposed.
 */
export function watchRelease(backend: TfjsWebGPUBackendInternals, dataId: TfjsDataId, release: () => void): void {
  let map = watched.get(backend);
  if (map === undefined) {
    const originalRelease = backend.releaseResource;
    const originalDispose = backend.dispose;
    if (typeof originalRelease !== "function") {
      throw new WebDLPackError(
        "UNSUPPORTED",
        "this TF.js WebGPU backend has no releaseResource(); webdlpack cannot know when it stops using a buffer",
        {
          field: "backend.releaseResource",
          value: typeof originalRelease,
          expected: "@tensorflow/tfjs-backend-webgpu 4.x",
        },
      );
    }
    const releases = new Map<TfjsDataId, () => void>();
    map = releases;
    watched.set(backend, releases);
    backend.releaseResource = function (this: TfjsWebGPUBackendInternals, id: TfjsDataId): void {
      originalRelease.call(this, id);
      const done = releases.get(id);
      if (done === undefined) return;
      const data = backend.tensorMap?.get(id);
      if (data === undefined || data.resource === null || data.resource === undefined) {
        releases.delete(id);
        done();
      }
    };
    backend.dispose = function (this: TfjsWebGPUBackendInternals): void {
      try {
        originalDispose?.call(this);
      } finally {
        const pending = [...releases.values()];
        releases.clear();
        for (const done of pending) done();
      }
    };
  }
  map.set(dataId, release);
}

/** The backends registered as queue users, each with the function that removes it. */
const flushing = new WeakMap<object, () => void>();

/** End TF.js's open compute pass and submit what it recorded (nothing when it recorded nothing). */
function submitRecorded(backend: TfjsWebGPUBackendInternals): void {
  if (backend.commandEncoder === null || backend.commandEncoder === undefined) return;
  backend.endComputePassEncoder?.(); // submitting with the pass open would invalidate the buffer and drop the work
  backend.submitQueue!(); // (checked when registered)
}

/**
 * TF.js as a queue user (context/transfers/queue-users.ts): it records its dispatches in a compute pass it
 * submits later, so every webdlpack transfer, readback and hand-off on `backend`'s device first submits what it
 * recorded — its pass ended, then `submitQueue()` (which also releases what TF.js disposed meanwhile). Never in
 * the middle of one of its ops: the user carries TF.js's device-guard owner, and queue-users.ts skips it while
 * TF.js is inside its own `createBuffer`. Idempotent; held weakly and let go once the backend is disposed. A
 * backend without `submitQueue` (another TF.js) is left alone: the adapters then copy through `dataToGPU()`.
 */
export function flushTfjsFirst(backend: TfjsWebGPUBackendInternals): void {
  if (flushing.has(backend) || typeof backend.submitQueue !== "function" || backend.device === undefined) return;
  const instance = new WeakRef(backend);
  const stop = addQueueUser(
    unwrapDevice(backend.device),
    () => {
      const live = instance.deref();
      // tfjs-backend-webgpu sets `disposed` in dispose(): its buffers are destroyed, nothing may be submitted.
      if (live === undefined || (live as { disposed?: boolean }).disposed === true) stop();
      else submitRecorded(live);
    },
    TFJS_OWNER,
  );
  flushing.set(backend, stop);
}

/** Number of foreign buffers TF.js backend `backend` still uses through the adapters (for tests). */
export function tfjsHeldBuffers(backend: object): number {
  return watched.get(backend)?.size ?? 0;
}

/**
 * Register a TF.js WebGPU backend built on the context's device and return it.
 *
 * `name` "webgpu" (default) replaces TF.js's own "webgpu" backend (disposing it
 * if it was made; its tensors become invalid). Any other name gets a copy of
 * the "webgpu" kernel registrations, so both backends can live side by side.
 * With `activate` (default) the backend is made current.
 */
export async function registerTfjsWebGPUBackend<B extends TfjsWebGPUBackendLike>(
  tf: TfjsBackendsLike,
  WebGPUBackend: TfjsWebGPUBackendClass<B>,
  ctx: WebDLPackContext = getContext(),
  name = "webgpu",
  options: RegisterTfjsOptions = {},
): Promise<B> {
  if (typeof WebGPUBackend !== "function") {
    throw new WebDLPackError("INVALID_ARGUMENT", "pass the WebGPUBackend class of @tensorflow/tfjs-backend-webgpu", {
      field: "WebGPUBackend",
      value: typeof WebGPUBackend,
      expected: "a class",
    });
  }
  if (typeof name !== "string" || name.length === 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "backend name must be a non-empty string", {
      field: "name",
      value: describeValue(name),
      expected: 'a non-empty string, e.g. "webdlpack-webgpu"',
    });
  }
  checkFrameworkVersion("@tensorflow/tfjs-core", (tf as { version_core?: unknown }).version_core, "tf.version_core");
  // TF.js gets the device guard: a destroy() from it drops only TF.js's reference.
  const device = ctx.getWebGPUDevice(options.deviceId ?? 0, { owner: TFJS_OWNER });
  // TF.js reads the adapter's vendor/architecture; an older GPUDevice without adapterInfo gets an empty record.
  const adapterInfo = (device as GPUDevice & { adapterInfo?: GPUAdapterInfo }).adapterInfo ?? ({} as GPUAdapterInfo);
  const backend = new WebGPUBackend(device, adapterInfo);
  flushTfjsFirst(backend); // what it records is submitted before webdlpack's transfers and hand-offs
  watchTfjsMemory(ctx, backend); // its cached bytes in ctx.memory(); its free buffers given back under pressure
  if (name !== "webgpu") {
    const kernels = (tf as { getKernelsForBackend?: (n: string) => unknown[] }).getKernelsForBackend;
    if (typeof tf.copyRegisteredKernels !== "function") {
      throw new WebDLPackError(
        "UNSUPPORTED",
        "this TF.js has no copyRegisteredKernels(); register under the name 'webgpu'",
        {
          field: "tf.copyRegisteredKernels",
          value: typeof tf.copyRegisteredKernels,
          expected: "a function (TF.js >= 2), or name 'webgpu'",
        },
      );
    }
    if (typeof kernels !== "function" || kernels(name).length === 0) tf.copyRegisteredKernels("webgpu", name);
  }
  if (tf.findBackendFactory(name) != null) tf.removeBackend(name);
  tf.registerBackend(name, () => backend, options.priority ?? 3);
  if (options.activate ?? true) {
    const ok = await tf.setBackend(name);
    if (!ok) {
      throw new WebDLPackError("GPU_ERROR", `tf.setBackend("${name}") failed`, {
        field: "name",
        value: name,
        expected: "a backend TF.js can initialize on the shared device",
      });
    }
  }
  return backend;
}

/** The active TF.js backend if it is a WebGPU backend on `device`, else a BAD_DEVICE error. */
export function activeBackendOn(tf: TfjsBackendsLike, device: GPUDevice, deviceId: number): TfjsWebGPUBackendInternals {
  const backend = tf.backend() as TfjsWebGPUBackendInternals | null;
  if (backend === null || typeof backend !== "object" || unwrapDevice(backend.device) !== unwrapDevice(device)) {
    throw new WebDLPackError(
      "BAD_DEVICE",
      `the active TF.js backend "${tf.getBackend()}" is not a WebGPU backend on webdlpack's webgpu:${deviceId}`,
      {
        field: "tf.getBackend()",
        value: tf.getBackend(),
        expected: "a backend made by registerTfjsWebGPUBackend() for this device, active",
      },
    );
  }
  flushTfjsFirst(backend); // a backend the page made itself too
  return backend;
}
