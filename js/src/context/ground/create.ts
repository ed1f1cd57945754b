/**
 * The one place GPU buffers are created for the pointer table: buffer usage
 * flags, size rounding, argument checks and `createBuffer` under error scopes.
 * The caching allocator (device-allocator.ts) decides sizes and reuse; this
 * file only creates.
 */
import { WebDLPackError } from "../../errors.js";
import { createBufferAs, WEBDLPACK_OWNER } from "./meter.js";

/**
 * GPUBufferUsage bit values (WebGPU spec), defined here so this module also
 * loads where the `GPUBufferUsage` global is missing (Node, workers without WebGPU).
 */
export const GPUUsage = Object.freeze({
  MAP_READ: 0x0001,
  MAP_WRITE: 0x0002,
  COPY_SRC: 0x0004,
  COPY_DST: 0x0008,
  INDEX: 0x0010,
  VERTEX: 0x0020,
  UNIFORM: 0x0040,
  STORAGE: 0x0080,
  INDIRECT: 0x0100,
  QUERY_RESOLVE: 0x0200,
});

/** All defined usage bits. */
const ALL_USAGE_BITS = 0x03ff;

/**
 * Default usage of `allocWebGPU` buffers: STORAGE | COPY_SRC | COPY_DST.
 * TF.js's `createTensorFromGPUData` (tfjs-backend-webgpu/src/backend_webgpu.ts)
 * requires STORAGE | COPY_SRC, and ORT-web's `Tensor.fromGpuBuffer` needs STORAGE;
 * COPY_DST lets `queue.writeBuffer` fill it.
 */
export const DEFAULT_GPU_USAGE = GPUUsage.STORAGE | GPUUsage.COPY_SRC | GPUUsage.COPY_DST;

/**
 * Allocation granularity in bytes. ORT-web rounds every storage buffer up to a
 * multiple of 16 (`calcNormalizedBufferSize` in
 * onnxruntime js/web/lib/wasm/jsep/webgpu/gpu-data-manager.ts), and TF.js only
 * checks `buffer.size >= tensor bytes` (createTensorFromGPUData), so a 16-byte
 * multiple suits both and any vec4 shader access.
 */
export const GPU_ALLOCATION_ALIGNMENT = 16;

/**
 * Bytes to allocate for a request of `nbytes`: rounded up to a multiple of 16,
 * at least 16 (a zero-size buffer can not be bound), and never above `limit`
 * (falls back to a multiple of 4, then to `nbytes` itself, near the limit).
 */
export function allocationSize(nbytes: number, limit: number): number {
  const align = GPU_ALLOCATION_ALIGNMENT;
  const rounded = Math.max(align, Math.ceil(nbytes / align) * align);
  if (rounded <= limit) return rounded;
  const by4 = Math.ceil(nbytes / 4) * 4;
  return by4 <= limit ? by4 : nbytes;
}

/**
 * Check a byte count against the device limit. Throws INVALID_ARGUMENT naming
 * the value and the limit.
 */
export function checkByteCount(nbytes: unknown, maxBufferSize: number, deviceId: number): number {
  if (typeof nbytes !== "number" || !Number.isSafeInteger(nbytes) || nbytes < 0 || nbytes > maxBufferSize) {
    throw new WebDLPackError("INVALID_ARGUMENT", `bad GPU allocation size for device ${deviceId}`, {
      field: "nbytes",
      value: nbytes,
      expected: `a safe integer 0 <= nbytes <= ${maxBufferSize} (device.limits.maxBufferSize)`,
    });
  }
  return nbytes;
}

/**
 * Check GPU buffer usage flags, including WebGPU's rule that MAP_READ goes only
 * with COPY_DST and MAP_WRITE only with COPY_SRC. Throws INVALID_ARGUMENT.
 */
export function checkUsage(usage: unknown): number {
  if (typeof usage !== "number" || !Number.isInteger(usage) || usage <= 0 || (usage & ~ALL_USAGE_BITS) !== 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad GPU buffer usage", {
      field: "usage",
      value: usage,
      expected: "a nonzero combination of GPUBufferUsage flags (0x001..0x3ff)",
    });
  }
  if ((usage & GPUUsage.MAP_READ) !== 0 && (usage & ~(GPUUsage.MAP_READ | GPUUsage.COPY_DST)) !== 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "MAP_READ buffer usage may only be combined with COPY_DST", {
      field: "usage",
      value: usage,
      expected: "MAP_READ | COPY_DST (0x9) at most, when MAP_READ is set",
    });
  }
  if ((usage & GPUUsage.MAP_WRITE) !== 0 && (usage & ~(GPUUsage.MAP_WRITE | GPUUsage.COPY_SRC)) !== 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "MAP_WRITE buffer usage may only be combined with COPY_SRC", {
      field: "usage",
      value: usage,
      expected: "MAP_WRITE | COPY_SRC (0x6) at most, when MAP_WRITE is set",
    });
  }
  return usage;
}

/** What {@link createCheckedBuffer} creates. */
export interface BufferRequest {
  /** Bytes, already rounded. */
  size: number;
  /** GPUBufferUsage flags. */
  usage: number;
  /** Debug label shown in WebGPU messages. */
  label?: string;
  /** Device id, for messages. */
  deviceId: number;
}

/** A `createBuffer` call made under the two error scopes, before the scopes are read. */
interface ScopedCreation {
  /** The buffer, or undefined when `createBuffer` threw. */
  buffer: GPUBuffer | undefined;
  /** What `createBuffer` threw, or undefined. */
  thrown: unknown;
  /** The popped scopes' errors: [validation, out-of-memory]. */
  scopes: Promise<[GPUError | null, GPUError | null]>;
}

/**
 * Push `out-of-memory` and `validation` error scopes, call `createBuffer` (catching
 * a throw) and pop both scopes whatever happened, in push order reversed. Shared
 * by {@link createCheckedBuffer} and {@link createBufferUnchecked}, which differ
 * only in when they read the scopes.
 */
function createUnderErrorScopes(device: GPUDevice, request: BufferRequest): ScopedCreation {
  const descriptor: GPUBufferDescriptor = { size: request.size, usage: request.usage };
  if (request.label !== undefined) descriptor.label = request.label;
  device.pushErrorScope("out-of-memory");
  device.pushErrorScope("validation");
  let buffer: GPUBuffer | undefined;
  let thrown: unknown;
  try {
    buffer = createBufferAs(device, descriptor, WEBDLPACK_OWNER);
  } catch (err) {
    thrown = err;
  }
  return { buffer, thrown, scopes: Promise.all([device.popErrorScope(), device.popErrorScope()]) };
}

/** The request as named in error messages: size, usage and device. */
function describeRequest(request: BufferRequest): string {
  return `${request.size} bytes with usage 0x${request.usage.toString(16)} on device ${request.deviceId}`;
}

/** OUT_OF_MEMORY for a request (`what` from {@link describeRequest}) the out-of-memory scope caught. */
function outOfMemoryError(request: BufferRequest, what: string, oom: GPUError): WebDLPackError {
  return new WebDLPackError("OUT_OF_MEMORY", `out of GPU memory allocating ${what}: ${oom.message}`, {
    field: "nbytes",
    value: request.size,
    expected: "a size the device can allocate now",
    cause: oom,
  });
}

/** GPU_ERROR for a request WebGPU refused (validation error or a throw from `createBuffer`). */
function refusedError(request: BufferRequest, what: string, message: string, cause: unknown): WebDLPackError {
  return new WebDLPackError("GPU_ERROR", `WebGPU refused to create a buffer of ${what}: ${message}`, {
    field: "usage",
    value: request.usage,
    expected: "a valid GPUBufferDescriptor for this device",
    cause,
  });
}

/** The message of something `createBuffer` threw. */
function thrownMessage(thrown: unknown): string {
  return thrown instanceof Error ? thrown.message : String(thrown);
}

/**
 * Create a buffer under `out-of-memory` and `validation` error scopes, so a
 * failure becomes a typed error (OUT_OF_MEMORY / GPU_ERROR) and never an
 * uncaptured device error. The failed buffer is destroyed; the device is left alone.
 */
export async function createCheckedBuffer(device: GPUDevice, request: BufferRequest): Promise<GPUBuffer> {
  const { buffer, thrown, scopes } = createUnderErrorScopes(device, request);
  const [validation, oom] = await scopes;
  if (thrown instanceof WebDLPackError) throw thrown; // the memory budget's OUT_OF_MEMORY, as it is
  if (oom !== null) {
    buffer?.destroy();
    throw outOfMemoryError(request, describeRequest(request), oom);
  }
  if (validation !== null || thrown !== undefined || buffer === undefined) {
    buffer?.destroy();
    throw refusedError(
      request,
      describeRequest(request),
      validation?.message ?? thrownMessage(thrown),
      validation ?? thrown,
    );
  }
  return buffer;
}

/** A buffer created synchronously and the later verdict of its error scopes. */
export interface UncheckedBuffer {
  /** The buffer (may be invalid if `verdict` resolves to an error). */
  buffer: GPUBuffer;
  /** Resolves to null when creation succeeded, else to OUT_OF_MEMORY / GPU_ERROR. Never rejects. */
  verdict: Promise<WebDLPackError | null>;
}

/**
 * Create a buffer under the same error scopes as {@link createCheckedBuffer}
 * without waiting for them: the caller gets the buffer now and the scopes'
 * verdict later. An exception thrown by `createBuffer` itself is a GPU_ERROR at once.
 */
export function createBufferUnchecked(device: GPUDevice, request: BufferRequest): UncheckedBuffer {
  const { buffer, thrown, scopes } = createUnderErrorScopes(device, request);
  const what = describeRequest(request);
  if (thrown !== undefined || buffer === undefined) {
    void scopes.catch(() => undefined);
    if (thrown instanceof WebDLPackError) throw thrown; // the memory budget's OUT_OF_MEMORY, as it is
    throw refusedError(request, what, thrownMessage(thrown), thrown);
  }
  const verdict = scopes.then(
    ([validation, oom]) => {
      if (oom !== null) return outOfMemoryError(request, what, oom);
      if (validation !== null) return refusedError(request, what, validation.message, validation);
      return null;
    },
    (err: unknown) =>
      new WebDLPackError("GPU_ERROR", `the error scopes of a buffer of ${what} failed: ${String(err)}`, {
        field: "device",
        value: request.deviceId,
        expected: "a working device",
        cause: err,
      }),
  );
  return { buffer, verdict };
}

/** Whether `value` looks like a GPUBuffer (size, usage, destroy). */
export function isGPUBuffer(value: unknown): value is GPUBuffer {
  if (value === null || typeof value !== "object") return false;
  // A real one (browsers): no reads through the bindings. Others (dawn.node, test doubles): by their members.
  if (typeof GPUBuffer === "function" && value instanceof GPUBuffer) return true;
  const b = value as Record<string, unknown>;
  return typeof b["size"] === "number" && typeof b["usage"] === "number" && typeof b["destroy"] === "function";
}
