/**
 * ONNX Runtime Web ↔ webdlpack, on the context's shared GPUDevice.
 *
 * Conditions (checked with onnxruntime-web 1.30.0, see docs/platform-notes):
 * - Use the WebGPU build (`onnxruntime-web/webgpu`). The default/`all` builds
 *   (JSEP) always make their own device; the adapters detect that afterwards
 *   through `ort.env.webgpu.device` and refuse (BAD_DEVICE) rather than compute
 *   on buffers of another device.
 * - ORT ignores `ort.env.webgpu.device` alone: the device must be given in the
 *   session options, `executionProviders: [{name: "webgpu", device}]` —
 *   {@link ortSessionOptions} does that (ORT 1.23–1.29 get it another way: compat/ort-device.ts).
 * - Outputs stay on the GPU with `preferredOutputLocation: "gpu-buffer"`; their
 *   buffers are padded, so shape and dtype come from the ORT tensor, never from
 *   `buffer.size`.
 * - Disposing an ORT output lets ORT reuse its buffer on the next run, so an
 *   adopted output is disposed only when every webdlpack holder released it.
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { DeviceType } from "../dlpack/constants.js";
import { getContext, unwrapDevice, type WebDLPackContext } from "../context/index.js";
import { Tensor } from "../tensor/index.js";
import { dtypeName, dtypeOfOrt, isOrtGpuBufferType, ORT_GPU_BUFFER_TYPES, ortTypeOf } from "./dtypes.js";
import type { OrtExecutionProvider, OrtLike, OrtSessionOptions, OrtTensorLike } from "./framework-types.js";
import { GPUOutputAdoptions } from "./adopt.js";
import { countHandoffCopy, handOffGPUTensor, readOnlyReason, readOnlyRefusal, recordHandoff } from "./handoff.js";
import { inPlaceCopyReason } from "./in-place.js";
import { ORT_OWNER } from "./producer.js";
import { ortDeviceRoute, provideDeviceToOrt } from "./compat/ort-device.js";
import { giveBackOrtOutput } from "./ort-release.js";
import { tensorToTypedArray } from "./typed-array.js";

/** Options shared by the ORT adapter functions. */
export interface OrtAdapterOptions {
  /** The context (default `getContext()`). */
  ctx?: WebDLPackContext;
  /** webdlpack device id ORT runs on (default 0). */
  deviceId?: number;
}

function deviceLabel(id: number): string {
  return `webgpu:${id}`;
}

/**
 * Throw BAD_DEVICE if ORT already uses a GPUDevice other than the context's
 * device `deviceId` (seen in `ort.env.webgpu.device`, which ORT sets when it
 * makes its own device).
 */
export function checkOrtDevice(ort: OrtLike, ctx: WebDLPackContext = getContext(), deviceId = 0): GPUDevice {
  ortDeviceRoute(ort); // UNSUPPORTED for an ORT version webdlpack cannot share a device with
  // ORT gets the device guard: its destroy() (ORT destroys devices it releases) drops only ORT's reference.
  const device = ctx.getWebGPUDevice(deviceId, { owner: ORT_OWNER });
  checkOrtEnvDevice(ort, device, deviceId);
  return device;
}

/** Throw unless `ort.env.webgpu.device` is unset or `device` (guards compared by the device they stand for). */
function checkOrtEnvDevice(ort: OrtLike, device: GPUDevice, deviceId: number): void {
  const webgpuEnv = ort?.env?.webgpu;
  if (webgpuEnv === undefined || webgpuEnv === null) {
    throw new WebDLPackError(
      "INVALID_ARGUMENT",
      "this does not look like the onnxruntime-web namespace (no ort.env.webgpu)",
      {
        field: "ort.env.webgpu",
        value: describeValue(webgpuEnv),
        expected: "the module of onnxruntime-web/webgpu",
      },
    );
  }
  const bound = webgpuEnv.device;
  if (bound !== undefined && bound !== null && unwrapDevice(bound) !== unwrapDevice(device)) {
    throw new WebDLPackError(
      "BAD_DEVICE",
      `ONNX Runtime is already bound to another GPUDevice than webdlpack's ${deviceLabel(deviceId)}; ` +
        "its buffers cannot be used on this device. Create every ORT session with ortSessionOptions() " +
        "(and use the onnxruntime-web/webgpu build: the JSEP builds always make their own device)",
      {
        field: "ort.env.webgpu.device",
        value: (bound as GPUDevice).label || "a different GPUDevice",
        expected: `undefined or the GPUDevice of ${deviceLabel(deviceId)}`,
      },
    );
  }
}

/** ORT bound to one webdlpack device: session options and tensor conversions for it (`T`: `ort.Tensor`). */
export interface OrtBinding<T extends OrtTensorLike = OrtTensorLike> {
  /** The ORT namespace. */
  readonly ort: OrtLike<T>;
  /** The context. */
  readonly ctx: WebDLPackContext;
  /** webdlpack device id. */
  readonly deviceId: number;
  /** ORT's guard of the shared GPUDevice (`destroy()` on it drops only ORT's reference; `unwrapDevice` gives the real one). */
  readonly device: GPUDevice;
  /** Session options running on the shared device (see {@link ortSessionOptions}). */
  sessionOptions(extra?: OrtSessionOptions): OrtSessionOptions;
  /** {@link tensorFromOrt} on this binding's device (checks the binding first). */
  tensorFromOrt(ortTensor: OrtTensorLike): Tensor;
  /** {@link tensorToOrt} with this binding's ORT and context. */
  tensorToOrt(tensor: Tensor, options?: Omit<TensorToOrtOptions, "ctx">): Promise<T>;
}

/**
 * Bind ONNX Runtime Web to the context's device `deviceId` (default 0; call
 * `ctx.setup()` first). Throws BAD_DEVICE if ORT already uses another device.
 * Sets `ort.env.webgpu.device` to the shared device so the binding is visible
 * (ORT itself ignores it; sessions still need {@link OrtBinding.sessionOptions}).
 */
export function bindOrtToContext<T extends OrtTensorLike>(
  ort: OrtLike<T>,
  ctx: WebDLPackContext = getContext(),
  options: { deviceId?: number } = {},
): OrtBinding<T> {
  const deviceId = options.deviceId ?? 0;
  const device = checkOrtDevice(ort, ctx, deviceId);
  if (ort.env.webgpu.device !== device) {
    try {
      ort.env.webgpu.device = device;
    } catch {
      // A read-only property equal to `device` passed the check; anything else threw above.
    }
  }
  const fromOrtOptions: OrtAdapterOptions = { ctx, deviceId };
  return {
    ort,
    ctx,
    deviceId,
    device,
    sessionOptions: (extra?: OrtSessionOptions) => ortSessionOptions(ctx, extra, { deviceId, ort }),
    tensorFromOrt: (ortTensor: OrtTensorLike) => {
      // Per hand-off: the device is still live and ORT still bound to it (ORT's guard was taken above, once).
      checkOrtEnvDevice(ort, ctx.getWebGPUDevice(deviceId), deviceId);
      return tensorFromOrt(ortTensor, fromOrtOptions);
    },
    tensorToOrt: (tensor: Tensor, opts?: Omit<TensorToOrtOptions, "ctx">) => tensorToOrt(ort, tensor, { ...opts, ctx }),
  };
}

/**
 * ORT session options that run on the context's device: the `webgpu`
 * execution provider gets `device` (added first if `extra` has none; other
 * providers are kept after it as fallbacks), and `preferredOutputLocation`
 * defaults to `"gpu-buffer"` so outputs stay on the GPU. A `webgpu` entry that
 * names another device is a BAD_DEVICE error. Given `options.ort` (as bindings do), an ORT 1.23–1.29
 * gets the shared device when it requests its own instead (compat/ort-device.ts): the entry then names no device.
 * `options.owner` names whose buffers the session's are in `ctx.memory()` (default "onnxruntime-web";
 * Transformers.js's copy of ORT: "transformers.js").
 */
export function ortSessionOptions(
  ctx: WebDLPackContext = getContext(),
  extra: OrtSessionOptions = {},
  options: { deviceId?: number; ort?: OrtLike; owner?: string } = {},
): OrtSessionOptions {
  const deviceId = options.deviceId ?? 0;
  const device = ctx.getWebGPUDevice(deviceId, { owner: options.owner ?? ORT_OWNER });
  const inOptions = options.ort === undefined || ortDeviceRoute(options.ort) === "session-options";
  if (!inOptions) provideDeviceToOrt(options.ort!, device);
  const given = extra.executionProviders ?? [];
  if (!Array.isArray(given)) {
    throw new WebDLPackError("INVALID_ARGUMENT", "executionProviders must be an array", {
      field: "extra.executionProviders",
      value: describeValue(given),
      expected: "an array",
    });
  }
  let hasWebGPU = false;
  const providers: OrtExecutionProvider[] = given.map((ep: OrtExecutionProvider, i: number) => {
    const name = typeof ep === "string" ? ep : ep?.name;
    if (name !== "webgpu") return ep;
    hasWebGPU = true;
    if (typeof ep !== "string" && ep.device !== undefined && unwrapDevice(ep.device) !== unwrapDevice(device)) {
      throw new WebDLPackError(
        "BAD_DEVICE",
        `the webgpu execution provider names another GPUDevice than webdlpack's ${deviceLabel(deviceId)}`,
        {
          field: `extra.executionProviders[${i}].device`,
          value: (ep.device as GPUDevice)?.label || "a different GPUDevice",
          expected: `the GPUDevice of ${deviceLabel(deviceId)} (or none)`,
        },
      );
    }
    if (!inOptions) return typeof ep === "string" ? { name: "webgpu" } : { ...ep, device: undefined };
    return typeof ep === "string" ? { name: "webgpu", device } : { ...ep, device };
  });
  if (!hasWebGPU) providers.unshift(inOptions ? { name: "webgpu", device } : { name: "webgpu" });
  return {
    ...extra,
    executionProviders: providers,
    preferredOutputLocation: extra.preferredOutputLocation ?? "gpu-buffer",
  };
}

const adoptions = new GPUOutputAdoptions<OrtTensorLike>(ORT_OWNER);

function checkOrtTensor(t: OrtTensorLike): void {
  if (
    t === null ||
    typeof t !== "object" ||
    typeof t.type !== "string" ||
    !Array.isArray(t.dims) ||
    typeof t.location !== "string"
  ) {
    throw new WebDLPackError("INVALID_ARGUMENT", "expected an ort.Tensor", {
      field: "ortTensor",
      value: describeValue(t),
      expected: "an ort.Tensor (type, dims, location)",
    });
  }
}

/**
 * An ORT tensor as a webdlpack Tensor, without copying.
 *
 * - location "gpu-buffer": a WebGPU Tensor on device `deviceId` over the very
 *   same GPUBuffer. The ORT tensor now belongs to webdlpack: it is disposed
 *   (its buffer returned to ORT) once this Tensor, every other Tensor made from
 *   the same ORT tensor, and every zero-copy consumer of them (TF.js tensors,
 *   DLPack exports) have released it. Do not dispose the ORT tensor yourself.
 *   Released after ORT's last session was: ORT can no longer take it back, and
 *   webdlpack destroys the buffer instead of throwing ORT's error (ort-release.ts).
 * - location "cpu" / "cpu-pinned": a CPU Tensor over `ortTensor.data` (shared bytes).
 *
 * Shape and dtype come from `dims` and `type` (float16 stays float16, bool
 * stays 1 byte). Throws UNSUPPORTED for other locations and types (string, int4).
 */
export function tensorFromOrt(ortTensor: OrtTensorLike, options: OrtAdapterOptions = {}): Tensor {
  checkOrtTensor(ortTensor);
  const dtype = dtypeOfOrt(ortTensor.type);
  const shape = ortTensor.dims;
  if (ortTensor.location === "cpu" || ortTensor.location === "cpu-pinned") {
    const data = ortTensor.data;
    if (!ArrayBuffer.isView(data)) {
      throw new WebDLPackError("UNSUPPORTED", "this ORT CPU tensor has no TypedArray data", {
        field: "ortTensor.data",
        value: typeof data,
        expected: "a TypedArray",
      });
    }
    return Tensor.fromTypedArray(data, { shape, dtype });
  }
  if (ortTensor.location !== "gpu-buffer") {
    throw new WebDLPackError(
      "UNSUPPORTED",
      `an ORT tensor on "${ortTensor.location}" cannot become a webdlpack tensor`,
      {
        field: "ortTensor.location",
        value: ortTensor.location,
        expected: '"gpu-buffer" (session option preferredOutputLocation) or "cpu"',
      },
    );
  }
  const ctx = options.ctx ?? getContext();
  const deviceId = options.deviceId ?? 0;
  let buffer: GPUBuffer | undefined; // read at the first adoption
  return adoptions.tensor(
    ortTensor,
    {
      buffer: () => (buffer = ortTensor.gpuBuffer),
      dtype,
      shape,
      get label() {
        return `ORT output ${shape.join("x")} ${ortTensor.type}`; // formatted only for a message
      },
      field: "ortTensor.gpuBuffer",
      shapeField: "ortTensor.dims",
      // ORT's dispose after its last session was released throws a raw wasm error: never out of Tensor.dispose().
      giveBack() {
        giveBackOrtOutput(ortTensor, buffer, this.label);
      },
    },
    ctx,
    deviceId,
  );
}

/** Options of {@link tensorToOrt}. */
export interface TensorToOrtOptions {
  /** The context (default `getContext()`). */
  ctx?: WebDLPackContext;
  /**
   * "auto" (default): share the buffer when ORT can read it as it is, else
   * copy on the GPU. "never": share or throw COPY_REQUIRED. "always": copy.
   */
  copy?: "auto" | "never" | "always";
  /**
   * ORT will write through the tensor: it is a pre-allocated output in `session.run(feeds, fetches)` (default
   * false: an input, which ORT only reads). A READ_ONLY tensor is then copied (or refused with copy: "never").
   */
  mayWrite?: boolean;
}

/**
 * A webdlpack tensor as an ORT tensor.
 *
 * - WebGPU tensor → `ort.Tensor.fromGpuBuffer(buffer, {dataType, dims})` on the
 *   same buffer when it is contiguous at byte 0 with STORAGE usage; the source
 *   stays alive until the ORT tensor is disposed. Otherwise (byte_offset ≠ 0,
 *   strides, no STORAGE) a GPU copy is made: {@link handoffInfo} then reports
 *   `isCopied` and the reason; the copy is freed when the ORT tensor is disposed.
 *   Types ORT cannot take from a GPU buffer (float64, int8, …) are UNSUPPORTED.
 * - CPU tensor → `new ort.Tensor(type, view, dims)` over the same bytes when
 *   contiguous (a copy otherwise). ORT copies CPU inputs into its own heap at
 *   `run`; a view of wasm memory must be used before that memory can grow.
 *
 * Dispose the returned ORT tensor when done (`session.run` does not).
 */
export async function tensorToOrt<T extends OrtTensorLike>(
  ort: OrtLike<T>,
  tensor: Tensor,
  options: TensorToOrtOptions = {},
): Promise<T> {
  const ctx = options.ctx ?? getContext();
  const copy = options.copy ?? "auto";
  const dataType = ortTypeOf(tensor.dtype);
  const dims = [...tensor.shape];
  if (tensor.device.deviceType === DeviceType.kDLCPU) {
    const readOnly = (options.mayWrite ?? false) && tensor.flags.readOnly;
    if (copy === "never" && !tensor.isContiguous) {
      throw new WebDLPackError(
        "COPY_REQUIRED",
        "ORT takes CPU data as one contiguous TypedArray; this tensor is strided",
        {
          field: "tensor.strides",
          value: tensor.strides?.join(","),
          expected: "C-contiguous strides, or copy: 'auto' | 'always'",
        },
      );
    }
    if (copy === "never" && readOnly) throw readOnlyRefusal("ORT");
    const reason =
      copy === "always"
        ? "copy: 'always'"
        : !tensor.isContiguous
          ? "strided CPU tensor"
          : readOnly
            ? readOnlyReason("ORT")
            : null;
    const data = tensorToTypedArray(tensor, { copy: reason === null ? "auto" : "always" });
    const out = new ort.Tensor(dataType, data, dims);
    if (reason !== null) countHandoffCopy("ORT", data.byteLength);
    recordHandoff(out, reason);
    return out;
  }
  checkOrtDevice(ort, ctx, tensor.device.deviceId);
  if (!isOrtGpuBufferType(dataType)) {
    throw new WebDLPackError(
      "UNSUPPORTED",
      `ORT cannot take ${dataType} from a GPU buffer (webdlpack dtype ${dtypeName(tensor.dtype)} → ort gpu-buffer ?)`,
      {
        field: "tensor.dtype",
        value: dtypeName(tensor.dtype),
        expected: [...ORT_GPU_BUFFER_TYPES].join(", "),
      },
    );
  }
  return handOffGPUTensor(tensor, ctx, {
    name: "ORT",
    copy,
    // ORT reads its inputs; it writes only a pre-allocated output (session.run's fetches).
    mayWrite: options.mayWrite ?? false,
    expected: "a contiguous tensor at byte 0 with STORAGE usage",
    inPlace: (loc) => inPlaceCopyReason(tensor, loc, "ort.Tensor.fromGpuBuffer"),
    make: ({ buffer, release }) => ort.Tensor.fromGpuBuffer(buffer, { dataType, dims, dispose: release }),
  });
}
