/**
 * LiteRT.js (`@litertjs/core`) ↔ webdlpack, on the context's shared GPUDevice.
 *
 * Conditions (checked with @litertjs/core 2.5.3 in headless Chromium, WebGPU on SwiftShader):
 * - LiteRT runs WebGPU work on its environment's device. `loadLiteRt()` makes a
 *   default environment with a device of its own (asking for shader-f16,
 *   subgroups and the adapter's maximum limits); {@link bindLiteRtToContext}
 *   replaces it with an environment on the shared device and releases
 *   LiteRT's own. Bind before compiling models: a model compiled on the old
 *   environment keeps running on the old device.
 * - In: `new Tensor(gpuBuffer, shape, dtype, env, onDelete)` wraps a GPUBuffer
 *   without a copy (it needs STORAGE usage, data from byte 0, dense row-major);
 *   deleting that LiteRT tensor leaves the buffer alone and calls `onDelete`.
 * - Out: model outputs are fresh LiteRT tensors per run, each with its own
 *   GPUBuffer (usage STORAGE | COPY_SRC | COPY_DST), and `delete()` destroys that
 *   buffer — so an adopted output is deleted only when every webdlpack holder
 *   released it. `toGpuBuffer()` may return a buffer larger than the data:
 *   shape and dtype come from `tensor.type`, never from `buffer.size`.
 * - LiteRT.js tensors are float32, int32 or uint8.
 * - LiteRT.js does not say its version: a module without `supportsFeature` (added in 2.5, the floor) is
 *   UNSUPPORTED (compat/versions.ts).
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { DeviceType } from "../dlpack/constants.js";
import { parseDType } from "../dlpack/dtype.js";
import { getContext, unwrapDevice, type WebDLPackContext } from "../context/index.js";
import type { Tensor } from "../tensor/index.js";
import { GPUOutputAdoptions } from "./adopt.js";
import { dtypeName } from "./dtypes.js";
import { checkFrameworkFeature } from "./compat/versions.js";
import { countHandoffCopy, handOffGPUTensor, recordHandoff } from "./handoff.js";
import { inPlaceCopyReason } from "./in-place.js";
import type {
  LiteRtCpuTensorConstructor,
  LiteRtDType,
  LiteRtEnvironmentLike,
  LiteRtLike,
  LiteRtTensorLike,
} from "./litert-types.js";
import { tensorToTypedArray } from "./typed-array.js";

/** Owner name of LiteRT.js: its device guard, its adopted buffers and tensors in the ledger. */
export const LITERT_OWNER = "litert";

/** The element types LiteRT.js tensors have. */
export const LITERT_DTYPES: ReadonlySet<LiteRtDType> = new Set<LiteRtDType>(["float32", "int32", "uint8"]);

function isLiteRtDType(name: string): name is LiteRtDType {
  return (LITERT_DTYPES as ReadonlySet<string>).has(name);
}

const adoptions = new GPUOutputAdoptions<LiteRtTensorLike>(LITERT_OWNER);

/** LiteRT bound to one webdlpack device: its environment there and tensor conversions (`E`, `T`: LiteRT's types). */
export interface LiteRtBinding<
  E extends LiteRtEnvironmentLike = LiteRtEnvironmentLike,
  T extends LiteRtTensorLike = LiteRtTensorLike,
> {
  /** The `@litertjs/core` module. */
  readonly litert: LiteRtLike<E, T>;
  readonly ctx: WebDLPackContext;
  /** webdlpack device id. */
  readonly deviceId: number;
  /** LiteRT's guard of the shared GPUDevice (`unwrapDevice` gives the real one). */
  readonly device: GPUDevice;
  /** The LiteRT environment on the shared device (also LiteRT's default, unless `setDefault: false`). */
  readonly environment: E;
  /** {@link tensorToLiteRt} in this binding's environment. */
  tensorToLiteRt(tensor: Tensor, options?: Omit<TensorToLiteRtOptions<E>, "ctx" | "environment">): Promise<T>;
  /** {@link tensorFromLiteRt} on this binding's device. */
  tensorFromLiteRt(litertTensor: LiteRtTensorLike): Tensor;
}

/** Options of {@link bindLiteRtToContext}. */
export interface BindLiteRtOptions {
  /** webdlpack device id (default 0). */
  deviceId?: number;
  /**
   * Make the new environment LiteRT's default (default true): `loadAndCompile`
   * and `new Tensor(…)` without an environment then use the shared device, and
   * the default environment `loadLiteRt()` made (with its own device) is
   * deleted and its device destroyed (an earlier binding's environment on the
   * shared device is left alone).
   */
  setDefault?: boolean;
}

/** INVALID_ARGUMENT unless `litert` looks like @litertjs/core; UNSUPPORTED if it is older than the floor. */
function requireLiteRt(litert: { readonly Tensor: unknown; readonly Environment?: { create?: unknown } }): void {
  const looksLike = litert !== null && typeof litert === "object" && typeof litert.Tensor === "function";
  if (looksLike) checkFrameworkFeature("@litertjs/core", litert, "litert.supportsFeature");
  if (!looksLike || typeof litert.Environment?.create !== "function") {
    throw new WebDLPackError("INVALID_ARGUMENT", "this does not look like the @litertjs/core module", {
      field: "litert",
      value: describeValue(litert),
      expected: "the module of @litertjs/core (Tensor, Environment, getGlobalLiteRt)",
    });
  }
}

/**
 * Run LiteRT.js on the context's device `deviceId` (call `ctx.setup()` and
 * `loadLiteRt()` first): a LiteRT environment on the shared device, by default
 * made LiteRT's default environment.
 */
export async function bindLiteRtToContext<E extends LiteRtEnvironmentLike, T extends LiteRtTensorLike>(
  litert: LiteRtLike<E, T>,
  ctx: WebDLPackContext = getContext(),
  options: BindLiteRtOptions = {},
): Promise<LiteRtBinding<E, T>> {
  requireLiteRt(litert);
  const deviceId = options.deviceId ?? 0;
  const device = ctx.getWebGPUDevice(deviceId, { owner: LITERT_OWNER });
  let instance = null;
  if (options.setDefault ?? true) {
    try {
      instance = litert.getGlobalLiteRt();
    } catch (err) {
      throw new WebDLPackError(
        "INVALID_ARGUMENT",
        `LiteRT.js is not loaded yet (${String((err as Error)?.message ?? err)})`,
        {
          field: "litert",
          value: "not loaded",
          expected: "await loadLiteRt(wasmPath) before binding",
        },
      );
    }
  }
  const environment = await litert.Environment.create({ webGpuDevice: device });
  if (instance !== null) {
    const previous = instance.getDefaultEnvironment();
    instance.setDefaultEnvironment(environment);
    // LiteRT's own environment (from loadLiteRt) goes with its device; an earlier binding's stays usable.
    const own = previous.webGpuDevice;
    if (own !== null && unwrapDevice(own) !== unwrapDevice(device)) {
      previous.delete();
      own.destroy();
    }
  }
  return {
    litert,
    ctx,
    deviceId,
    device,
    environment,
    tensorToLiteRt: (tensor, opts) => tensorToLiteRt(litert, tensor, { ...opts, ctx, environment }),
    tensorFromLiteRt: (litertTensor) => tensorFromLiteRt(litertTensor, { ctx, deviceId }),
  };
}

/** Throw BAD_DEVICE unless `environment` runs on the context's device `deviceId`. */
export function checkLiteRtEnvironment(
  environment: LiteRtEnvironmentLike,
  ctx: WebDLPackContext = getContext(),
  deviceId = 0,
): void {
  const device = ctx.getWebGPUDevice(deviceId);
  const theirs = environment?.webGpuDevice;
  if (theirs === undefined || theirs === null || unwrapDevice(theirs) !== unwrapDevice(device)) {
    throw new WebDLPackError(
      "BAD_DEVICE",
      `this LiteRT environment does not run on webdlpack's webgpu:${deviceId}; its buffers cannot be shared. ` +
        "Use the environment of bindLiteRtToContext()",
      {
        field: "environment.webGpuDevice",
        value: theirs === null || theirs === undefined ? "no WebGPU device" : theirs.label || "a different GPUDevice",
        expected: `the GPUDevice of webgpu:${deviceId}`,
      },
    );
  }
}

/** Options of {@link tensorToLiteRt} (`E`: LiteRT's `Environment`). */
export interface TensorToLiteRtOptions<E extends LiteRtEnvironmentLike = LiteRtEnvironmentLike> {
  ctx?: WebDLPackContext;
  /** The LiteRT environment (default: LiteRT's default environment; it must run on the tensor's device). */
  environment?: E;
  /**
   * "auto" (default): share the buffer when LiteRT can read it as it is, else
   * copy on the GPU. "never": share or throw COPY_REQUIRED. "always": copy.
   */
  copy?: "auto" | "never" | "always";
}

function litertDType(tensor: Tensor): LiteRtDType {
  const name = dtypeName(tensor.dtype);
  if (!isLiteRtDType(name)) {
    const takes = [...LITERT_DTYPES].join(", ");
    throw new WebDLPackError(
      "UNSUPPORTED",
      `LiteRT.js has no tensor type for webdlpack dtype ${name}; it takes ${takes}`,
      {
        field: "tensor.dtype",
        value: name,
        expected: takes,
      },
    );
  }
  return name;
}

/**
 * A webdlpack tensor as a LiteRT.js tensor.
 *
 * - WebGPU tensor → `new litert.Tensor(gpuBuffer, shape, dtype, env, onDelete)`
 *   on the same buffer when it is dense at byte 0 with STORAGE usage; the
 *   source stays alive until the LiteRT tensor is deleted. Otherwise a GPU copy
 *   (freed when the LiteRT tensor is deleted); {@link handoffInfo} says which.
 * - CPU tensor → LiteRT copies it into its wasm heap (IS_COPIED; "never" throws COPY_REQUIRED).
 *
 * Delete the returned LiteRT tensor when done (`model.run` does not).
 */
export async function tensorToLiteRt<E extends LiteRtEnvironmentLike, T extends LiteRtTensorLike>(
  litert: LiteRtLike<E, T>,
  tensor: Tensor,
  options: TensorToLiteRtOptions<E> = {},
): Promise<T> {
  requireLiteRt(litert);
  const ctx = options.ctx ?? getContext();
  const copy = options.copy ?? "auto";
  const dtype = litertDType(tensor);
  const env = options.environment ?? litert.getGlobalLiteRt().getDefaultEnvironment();
  if (tensor.device.deviceType === DeviceType.kDLCPU) {
    if (copy === "never") {
      throw new WebDLPackError("COPY_REQUIRED", "LiteRT.js copies CPU data into its wasm heap", {
        field: "tensor.device",
        value: "cpu",
        expected: "a WebGPU tensor, or copy: 'auto' | 'always'",
      });
    }
    // litertDType let only float32, int32 and uint8 through: their arrays are Float32Array, Int32Array, Uint8Array.
    const data = tensorToTypedArray(tensor, { copy: "auto" }) as Float32Array | Int32Array | Uint8Array;
    const CpuTensor = litert.Tensor as unknown as LiteRtCpuTensorConstructor<E, T>;
    const out = new CpuTensor(data, [...tensor.shape], env);
    countHandoffCopy("LiteRT.js", data.byteLength);
    recordHandoff(out, "LiteRT.js copies CPU data into its wasm heap");
    return out;
  }
  checkLiteRtEnvironment(env, ctx, tensor.device.deviceId);
  // LiteRT.js reads the tensors it is given (model.run returns new outputs): a READ_ONLY tensor is lent as it is.
  return handOffGPUTensor(tensor, ctx, {
    name: "LiteRT.js",
    copy,
    mayWrite: false,
    expected: "a contiguous tensor at byte 0 with STORAGE usage",
    inPlace: (loc) => inPlaceCopyReason(tensor, loc, "new litert.Tensor(gpuBuffer, …)"),
    make: ({ buffer, release }) => new litert.Tensor(buffer, [...tensor.shape], dtype, env, release),
  });
}

/** Options of {@link tensorFromLiteRt}. */
export interface TensorFromLiteRtOptions {
  ctx?: WebDLPackContext;
  /** webdlpack device id of the LiteRT environment's device (default 0). */
  deviceId?: number;
}

function checkLiteRtTensor(t: LiteRtTensorLike): void {
  if (t === null || typeof t !== "object" || typeof t.toGpuBuffer !== "function" || typeof t.type?.dtype !== "string") {
    throw new WebDLPackError("INVALID_ARGUMENT", "expected a LiteRT.js Tensor", {
      field: "litertTensor",
      value: describeValue(t),
      expected: "a Tensor of @litertjs/core",
    });
  }
  if (t.deleted) {
    throw new WebDLPackError("DISPOSED", "this LiteRT.js tensor was deleted", {
      field: "litertTensor.deleted",
      value: true,
      expected: "a live tensor",
    });
  }
}

/**
 * A LiteRT.js WebGPU tensor (e.g. a model output) as a webdlpack Tensor over the
 * very same GPUBuffer, with LiteRT's shape and dtype. The LiteRT tensor now
 * belongs to webdlpack: it is deleted (its buffer destroyed) once this Tensor,
 * every other Tensor made from it and every zero-copy consumer of them have
 * released it. Do not delete it yourself.
 *
 * Throws UNSUPPORTED for CPU ("wasm") tensors and for tensors LiteRT stores
 * padded or strided, BAD_DEVICE when its environment is not on the context's device.
 */
export function tensorFromLiteRt(litertTensor: LiteRtTensorLike, options: TensorFromLiteRtOptions = {}): Tensor {
  checkLiteRtTensor(litertTensor);
  const ctx = options.ctx ?? getContext();
  const deviceId = options.deviceId ?? 0;
  const accelerator = litertTensor.accelerator;
  if (accelerator !== "webgpu") {
    throw new WebDLPackError("UNSUPPORTED", `a LiteRT.js tensor on "${accelerator}" has no GPUBuffer to share`, {
      field: "litertTensor.accelerator",
      value: accelerator,
      expected: '"webgpu" (compile the model with accelerator: "webgpu")',
    });
  }
  checkLiteRtEnvironment(litertTensor.environment, ctx, deviceId);
  const dtype = parseDType(litertTensor.type.dtype, "litertTensor.type.dtype");
  const shape = Array.from(litertTensor.type.layout.dimensions, Number);
  const label = `LiteRT output ${shape.join("x")} ${litertTensor.type.dtype}`;
  return adoptions.tensor(
    litertTensor,
    {
      buffer: () => {
        try {
          return litertTensor.toGpuBuffer();
        } catch (err) {
          throw new WebDLPackError(
            "UNSUPPORTED",
            `LiteRT.js gives no plain GPUBuffer for this tensor: ${String((err as Error)?.message ?? err)}`,
            {
              field: "litertTensor.toGpuBuffer()",
              value: litertTensor.type.dtype,
              expected: "a dense WebGPU tensor without padding",
            },
          );
        }
      },
      dtype,
      shape,
      label,
      field: "litertTensor.toGpuBuffer()",
      shapeField: "litertTensor.type.layout.dimensions",
      giveBack: () => litertTensor.delete(),
    },
    ctx,
    deviceId,
  );
}
