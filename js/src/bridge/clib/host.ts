/**
 * The JS side of `wdl_host_table`: functions C calls to reach the page-wide
 * WebDLPackContext and the tensor handle table. None of them throws into C:
 * each catches, keeps the error for `last_error`, and returns the failure value.
 */
import type { WebDLPackContext } from "../../context/index.js";
import { DEFAULT_GPU_USAGE, GPU_ALLOCATION_ALIGNMENT } from "../../context/index.js";
import { WebDLPackError } from "../../errors.js";
import { GPU_BUFFER_INFO_LAYOUT as INFO, type HostFunctions } from "./abi.js";
import { hostErrorOf, type HostError } from "./errors.js";
import type { TensorHandleTable } from "./handles.js";
import { heapView, writeCString, type HeapSource } from "./memory.js";

/** Owner recorded in the pointer table for buffers the C library allocates. */
export const CLIB_OWNER = "webdlpack-c";

/** All GPUBufferUsage bits defined by WebGPU. */
const ALL_USAGE_BITS = 0x3ff;

/** What the host functions need. */
export interface HostDeps {
  /** The context C's GPU calls go to (read on every call). */
  context: () => WebDLPackContext;
  /** The heap C's out-pointers point into. */
  heap: HeapSource;
  /** Handles for tensors in flight between C and JS. */
  handles: TensorHandleTable;
  /**
   * Called when WebGPU reports, after gpu_alloc already returned, that the
   * buffer could not be made (the error scopes resolve asynchronously).
   */
  onAsyncGpuError: (error: WebDLPackError, ptr: number) => void;
}

/** The host functions plus access to the last error they caught. */
export interface HostImpl extends HostFunctions {
  /** The most recent error a host function caught (undefined if none yet). */
  lastHostError(): HostError | undefined;
}

/** Build the functions a `wdl_host_table` points to. */
export function makeHostFunctions(deps: HostDeps): HostImpl {
  let last: HostError | undefined;
  const guard = <T>(failure: T, body: () => T): T => {
    try {
      return body();
    } catch (err) {
      last = hostErrorOf(err);
      return failure;
    }
  };

  const allocate = (deviceId: number, nbytes: number, usageIn: number): number => {
    const ctx = deps.context();
    const device = ctx.getWebGPUDevice(deviceId);
    const limit = device.limits.maxBufferSize;
    if (!(nbytes > 0 && nbytes <= limit)) {
      throw new WebDLPackError("INVALID_ARGUMENT", `bad GPU allocation size from C for device ${deviceId}`, {
        field: "nbytes", value: nbytes, expected: `0 < nbytes <= ${limit} (device.limits.maxBufferSize)` });
    }
    const usage = usageIn === 0 ? DEFAULT_GPU_USAGE : usageIn >>> 0;
    if ((usage & ~ALL_USAGE_BITS) !== 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", "bad GPU buffer usage from C", {
        field: "usage", value: usage, expected: "GPUBufferUsage flags (0x001..0x3ff), or 0 for the default" });
    }
    const align = GPU_ALLOCATION_ALIGNMENT;
    const rounded = Math.ceil(nbytes / align) * align;
    const size = rounded <= limit ? rounded : nbytes;
    let ptr = 0;
    device.pushErrorScope("out-of-memory");
    device.pushErrorScope("validation");
    let buffer: GPUBuffer;
    try {
      buffer = device.createBuffer({ size, usage, label: CLIB_OWNER });
    } finally {
      const validation = device.popErrorScope();
      const oom = device.popErrorScope();
      void Promise.all([validation, oom]).then(([v, o]) => {
        const e = o ?? v;
        if (e) {
          deps.onAsyncGpuError(new WebDLPackError(o ? "OUT_OF_MEMORY" : "GPU_ERROR",
            `createBuffer for C failed after the pointer was returned: ${e.message}`,
            { field: "nbytes", value: nbytes }), ptr >>> 0);
        }
      }, () => undefined);
    }
    try {
      ptr = ctx.registerGPUBuffer(buffer, { deviceId, owned: true, owner: CLIB_OWNER }) >>> 0;
    } catch (err) {
      buffer.destroy();
      throw err;
    }
    return ptr;
  };

  return {
    gpu_alloc: (deviceId, lo, hi, usage) =>
      guard(0, () => allocate(deviceId, (hi >>> 0) * 2 ** 32 + (lo >>> 0), usage >>> 0)),

    gpu_free: (ptr) =>
      guard(-1, () => {
        deps.context().freeWebGPU(ptr >>> 0);
        return 0;
      }),

    gpu_query: (ptr, out) =>
      guard(-1, () => {
        const info = deps.context().gpuPointerInfo(ptr >>> 0);
        const view = heapView(deps.heap);
        const at = out >>> 0;
        view.setBigUint64(at + INFO.nbytes, BigInt(info.requestedSize), true);
        view.setBigUint64(at + INFO.allocated_nbytes, BigInt(info.size), true);
        view.setInt32(at + INFO.device_id, info.deviceId, true);
        view.setUint32(at + INFO.usage, info.usage >>> 0, true);
        view.setUint32(at + INFO.owned, info.owned ? 1 : 0, true);
        view.setUint32(at + INFO.reserved, 0, true);
        return 0;
      }),

    tensor_to_js: (managed) => guard(0, () => deps.handles.put(managed >>> 0)),

    tensor_from_js: (handle) => guard(0, () => deps.handles.take(handle)),

    last_error: (buf, cap) => {
      const err = last ?? { code: 25, message: "[GPU_ERROR] the host reported no error" };
      try {
        writeCString(deps.heap, buf, cap, err.message);
      } catch {
        /* a bad buffer from C must not throw into C */
      }
      return err.code;
    },

    lastHostError: () => last,
  };
}
