/**
 * The description of a GPU buffer another framework hands over (an ONNX Runtime
 * output, a LiteRT.js output), built once from parts whose checks are split by
 * who can vouch for them: the shape comes from outside and is checked here,
 * the rest webdlpack made itself and is not checked again.
 *
 * {@link validateTensorDesc} checks every field of a description from outside.
 * An adapter adopting a framework output knows more: the dtype comes from its
 * own type table (already a valid DType), the GPU pointer from the context's
 * pointer table (non-zero, unsigned), the device id from a live device, there
 * are no strides and no byte offset. Only the framework's shape is foreign.
 */
import { DeviceType } from "./constants.js";
import type { DLDeviceDesc, DLTensorDesc } from "./desc.js";
import type { DType } from "./dtype.js";
import { checkShapeArray, checkShapeDims, computeExtent, type TensorExtent } from "./extent.js";

/**
 * The extent of a C-contiguous tensor of `dtype` (a valid DType, not checked)
 * and `shape` (checked: BAD_SHAPE naming `${field}` when not an array or an entry
 * is not an integer >= 0, BAD_NDIM above 32 dimensions, SIZE_OVERFLOW when the
 * size is not exact).
 */
export function checkedContiguousExtent(dtype: DType, shape: unknown, field: string): TensorExtent {
  checkShapeArray(shape, field, field);
  checkShapeDims(shape, field);
  return computeExtent(shape as readonly number[], null, dtype, false, field);
}

/**
 * A frozen C-contiguous WebGPU description at byte 0 of GPU pointer `pointer` on
 * webdlpack device `deviceId`, with no check: every part must come from
 * webdlpack itself (the pointer table, a live device id, a valid DType) or have
 * passed {@link checkedContiguousExtent} (the shape, copied here).
 */
export function trustedWebGPUDesc(
  pointer: number,
  deviceId: number,
  dtype: DType,
  shape: readonly number[],
): DLTensorDesc {
  return Object.freeze({
    data: pointer >>> 0,
    device: webgpuDevice(deviceId),
    ndim: shape.length,
    dtype,
    shape: Object.freeze([...shape]),
    strides: null,
    byteOffset: 0,
  });
}

/** One frozen `{kWebGPU, id}` per device id (the first few cached: every adopted output on a device shares it). */
const WEBGPU_DEVICES: DLDeviceDesc[] = [];

function webgpuDevice(deviceId: number): DLDeviceDesc {
  const known = WEBGPU_DEVICES[deviceId];
  if (known !== undefined) return known;
  const device = Object.freeze({ deviceType: DeviceType.kDLWebGPU, deviceId });
  if (deviceId < 64) WEBGPU_DEVICES[deviceId] = device;
  return device;
}
