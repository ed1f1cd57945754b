/**
 * The GPU side of a tensor: how a `"webgpu"` tensor's GPU pointer becomes its
 * GPUBuffer — through the page context's pointer table by default, or a
 * resolver a test or host sets.
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { getContext } from "../context/index.js";

/** Turns a GPU pointer on a webdlpack device into its GPUBuffer (the context's pointer table). */
export type GPUPointerResolver = (pointer: number, deviceId: number) => GPUBuffer;

/**
 * The default resolver: the page-wide context's pointer table. Checks that
 * the pointer's device is the tensor's device (INVALID_POINTER otherwise);
 * the table itself reports unknown, stale and lost pointers.
 */
const contextResolver: GPUPointerResolver = (pointer, deviceId) => {
  const ctx = getContext();
  const info = ctx.gpuPointerInfo(pointer);
  if (info.deviceId !== deviceId) {
    throw new WebDLPackError("INVALID_POINTER", "the GPU pointer belongs to another device than the tensor says", {
      field: "tensor.device.device_id",
      value: deviceId,
      expected: `${info.deviceId} (the pointer's device)`,
    });
  }
  return ctx.gpuPointerToBuffer(pointer);
};

let gpuResolver: GPUPointerResolver = contextResolver;

/**
 * Replace how `tensor.gpuBuffer` resolves GPU pointers (for tests, or a host
 * with its own pointer table); null restores the default, the page context's
 * `gpuPointerToBuffer`.
 */
export function setGPUPointerResolver(resolver: GPUPointerResolver | null): void {
  if (resolver !== null && typeof resolver !== "function") {
    throw new WebDLPackError("INVALID_ARGUMENT", "resolver must be a function or null", {
      field: "resolver",
      value: describeValue(resolver),
      expected: "(pointer, deviceId) => GPUBuffer, or null",
    });
  }
  gpuResolver = resolver ?? contextResolver;
}

/** The GPUBuffer behind `pointer` on device `deviceId`, through the current resolver. */
export function resolveGPUPointer(pointer: number, deviceId: number): GPUBuffer {
  return gpuResolver(pointer, deviceId);
}
