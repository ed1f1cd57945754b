/**
 * The decoded (plain JS) form of DLPack structs, and the one validation every
 * path shares: the reader runs it on what it decoded, the writer on what it
 * is asked to write, the Tensor on what it is built from. Every description
 * is made by {@link makeDesc}: after {@link validateTensorDesc}'s checks, or
 * — the one trusted entry, {@link trustedWebGPUDesc} — from parts webdlpack
 * vouches for (an adopted framework output: its own pointer, a live device
 * id, a dtype from its type table, and a shape that passed
 * {@link checkedContiguousExtent}, the shape steps of the same validation).
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { DeviceType, deviceTypeName, isDeviceType } from "./constants.js";
import { isSubByte, toDType, type DType } from "./dtype.js";
import { checkShapeArray, checkShapeDims, computeExtent, type TensorExtent } from "./extent.js";

/** A decoded `DLDevice`. */
export interface DLDeviceDesc {
  /** One of {@link DeviceType}. */
  readonly deviceType: number;
  /** Device index (0 for CPU; a webdlpack device id for WebGPU). */
  readonly deviceId: number;
}

/** A decoded `DLTensor`. All numbers are exact (safe integers); addresses are unsigned. */
export interface DLTensorDesc {
  /** `data`: wasm address (CPU) or GPU pointer (WebGPU), unsigned 32-bit. */
  readonly data: number;
  readonly device: DLDeviceDesc;
  readonly ndim: number;
  readonly dtype: DType;
  /** `ndim` extents, each ≥ 0. */
  readonly shape: readonly number[];
  /** `ndim` strides in elements, or null (C-contiguous). */
  readonly strides: readonly number[] | null;
  /** `byte_offset`: bytes from `data` to the first element. */
  readonly byteOffset: number;
}

/** A `DLPackVersion`. */
export interface DLPackVersionDesc {
  readonly major: number;
  readonly minor: number;
}

/** A decoded `DLManagedTensorVersioned` (or legacy `DLManagedTensor`, then `version` is null). */
export interface ManagedTensorDesc extends DLTensorDesc {
  /** Address of the managed struct itself (what the deleter is called with). */
  readonly address: number;
  /** The struct's version; null for the legacy unversioned struct. */
  readonly version: DLPackVersionDesc | null;
  /** `manager_ctx` (producer-private address; may be 0). */
  readonly managerCtx: number;
  /** `deleter`: function-table index of `void deleter(self)`, or 0 for none. */
  readonly deleter: number;
  /** `flags` (DLPackFlag bits; always 0 for the legacy struct). */
  readonly flags: number;
}

/** What the writer and the Tensor factories accept: like {@link DLTensorDesc}, with defaults and dtype names. */
export interface DLTensorInput {
  readonly data: number;
  readonly device: DLDeviceDesc;
  /** A {@link DType} or a name such as `"float32"`. */
  readonly dtype: DType | string;
  readonly shape: readonly number[];
  /** Strides in elements; null/undefined for C-contiguous. */
  readonly strides?: readonly number[] | null;
  /** Default 0. */
  readonly byteOffset?: number;
}

/** Options of {@link validateTensorDesc}. */
export interface ValidateOptions {
  /**
   * Size of the memory `data` points into. Given for CPU tensors, the whole
   * reachable byte range must lie inside `[0, memorySize)`.
   */
  memorySize?: number;
  /** `IS_SUBBYTE_TYPE_PADDED`: sub-byte elements take a byte each. */
  subbytePadded?: boolean;
  /** Prefix of field names in errors; default `"DLTensor"`. */
  field?: string;
  /**
   * Allow `data == 0` for a non-empty tensor (default false). Only for
   * descriptions whose `data` is an offset into a JS ArrayBuffer, not an address.
   */
  allowNullData?: boolean;
}

/**
 * Validate a tensor description (every rule the codec enforces on decode)
 * and normalise it into a frozen {@link DLTensorDesc} plus its extent.
 * Throws `WebDLPackError` with code BAD_NDIM, BAD_SHAPE, BAD_STRIDES,
 * SIZE_OVERFLOW, BAD_DTYPE, BAD_DEVICE, NULL_POINTER, OUT_OF_BOUNDS or
 * INVALID_ARGUMENT, and the offending field.
 */
export function validateTensorDesc(
  input: DLTensorInput,
  options: ValidateOptions = {},
): { desc: DLTensorDesc; extent: TensorExtent } {
  const f = options.field ?? "DLTensor";
  if (input === null || typeof input !== "object") {
    throw new WebDLPackError("INVALID_ARGUMENT", "tensor description must be an object", {
      field: f,
      value: describeValue(input),
      expected: "an object {data, device, dtype, shape, strides?, byteOffset?}",
    });
  }
  const { shape, device } = input;
  checkShapeArray(shape, `${f}.shape`, `${f}.ndim`);
  const ndim = shape.length;
  // Device.
  if (device === null || typeof device !== "object") {
    throw new WebDLPackError("BAD_DEVICE", "device must be {deviceType, deviceId}", {
      field: `${f}.device`,
      value: describeValue(device),
      expected: "an object {deviceType, deviceId}",
    });
  }
  if (!Number.isInteger(device.deviceType) || !isDeviceType(device.deviceType)) {
    throw new WebDLPackError("BAD_DEVICE", "unknown device type", {
      field: `${f}.device.device_type`,
      value: device.deviceType,
      expected: "a DLDeviceType from dlpack.h",
    });
  }
  const cpu = device.deviceType === DeviceType.kDLCPU;
  if (
    !Number.isInteger(device.deviceId) ||
    device.deviceId < 0 ||
    device.deviceId > 0x7fffffff ||
    (cpu && device.deviceId !== 0)
  ) {
    throw new WebDLPackError("BAD_DEVICE", `bad device id for ${deviceTypeName(device.deviceType)}`, {
      field: `${f}.device.device_id`,
      value: device.deviceId,
      expected: cpu ? "0 (one CPU: the wasm memory)" : "0 <= device_id <= 2^31 - 1",
    });
  }
  const dtype = toDType(input.dtype, `${f}.dtype`);
  // Shape and strides.
  checkShapeDims(shape, `${f}.shape`);
  const strides = input.strides ?? null;
  if (strides !== null) {
    if (!Array.isArray(strides) || strides.length !== ndim) {
      throw new WebDLPackError("BAD_STRIDES", "strides must be null or one integer per dimension", {
        field: `${f}.strides`,
        value: Array.isArray(strides) ? `length ${strides.length}` : strides,
        expected: `null or ${ndim} integers`,
      });
    }
    for (let i = 0; i < ndim; i++) {
      const s = strides[i];
      if (typeof s !== "number" || !Number.isSafeInteger(s)) {
        throw new WebDLPackError("BAD_STRIDES", "stride must be an integer of magnitude <= 2^53 - 1", {
          field: `${f}.strides[${i}]`,
          value: s,
          expected: "|stride| <= 2^53 - 1",
        });
      }
    }
  }
  const byteOffset = input.byteOffset ?? 0;
  if (typeof byteOffset !== "number" || !Number.isSafeInteger(byteOffset) || byteOffset < 0) {
    throw new WebDLPackError(
      typeof byteOffset === "number" && byteOffset > Number.MAX_SAFE_INTEGER ? "SIZE_OVERFLOW" : "INVALID_ARGUMENT",
      "byte_offset must be a non-negative safe integer",
      { field: `${f}.byte_offset`, value: byteOffset, expected: "0 <= byte_offset <= 2^53 - 1" },
    );
  }
  const data = input.data;
  if (typeof data !== "number" || !Number.isInteger(data) || data < 0 || data > 0xffffffff) {
    throw new WebDLPackError("INVALID_ARGUMENT", "data must be an unsigned 32-bit address", {
      field: `${f}.data`,
      value: data,
      expected: "0 <= data <= 2^32 - 1",
    });
  }
  const extent = computeExtent(shape, strides, dtype, options.subbytePadded ?? false, f);
  // Where the bytes are.
  // spec/validation-rules.json (one rule set with C and Python): packed sub-byte tensors are C-contiguous,
  // and data is NULL only for empty tensors, on every device.
  if (extent.count > 0 && !extent.contiguous && isSubByte(dtype) && options.subbytePadded !== true) {
    throw new WebDLPackError("BAD_STRIDES", "packed sub-byte tensors must be C-contiguous", {
      field: `${f}.strides`,
      value: strides === null ? "null" : `[${strides.join(", ")}]`,
      expected: "null or row-major strides (or the IS_SUBBYTE_TYPE_PADDED flag)",
    });
  }
  if (extent.count > 0 && data === 0 && !options.allowNullData) {
    throw new WebDLPackError("NULL_POINTER", "data is NULL but the tensor has elements", {
      field: `${f}.data`,
      value: 0,
      expected: "a non-NULL address (NULL only for empty tensors)",
    });
  }
  if (cpu && options.memorySize !== undefined) {
    const memorySize = options.memorySize;
    if (extent.nbytes > memorySize) {
      throw new WebDLPackError("SIZE_OVERFLOW", "tensor is larger than the whole wasm memory", {
        field: `${f}.shape`,
        value: extent.nbytes,
        expected: `<= memory size ${memorySize}`,
      });
    }
    if (extent.count > 0) {
      const first = data + byteOffset;
      const start = first + extent.lowByte;
      const end = first + extent.highByte;
      if (start < 0) {
        throw new WebDLPackError("OUT_OF_BOUNDS", "negative strides reach below address 0", {
          field: `${f}.strides`,
          value: start,
          expected: ">= 0",
        });
      }
      if (end > memorySize) {
        const field = data < memorySize && first >= memorySize ? `${f}.byte_offset` : `${f}.data`;
        throw new WebDLPackError("OUT_OF_BOUNDS", `tensor bytes [${start}, ${end}) lie outside wasm memory`, {
          field,
          value: field.endsWith("byte_offset") ? byteOffset : data,
          expected: `all bytes inside [0, ${memorySize})`,
        });
      }
    }
  }
  const desc = makeDesc(data, device.deviceType, device.deviceId, dtype, shape, strides, byteOffset);
  return { desc, extent };
}

/**
 * The one maker of a {@link DLTensorDesc}: frozen, with copies of `shape` and
 * `strides`. Checks nothing: its callers are {@link validateTensorDesc} (after
 * every check) and {@link trustedWebGPUDesc}.
 */
function makeDesc(
  data: number,
  deviceType: number,
  deviceId: number,
  dtype: DType,
  shape: readonly number[],
  strides: readonly number[] | null,
  byteOffset: number,
): DLTensorDesc {
  return Object.freeze({
    data,
    device: deviceDesc(deviceType, deviceId),
    ndim: shape.length,
    dtype,
    shape: Object.freeze([...shape]),
    strides: strides === null ? null : Object.freeze([...strides]),
    byteOffset,
  });
}

/** Frozen `{deviceType, deviceId}`s, the first few ids of CPU and WebGPU cached (every tensor on a device shares one). */
const DEVICES = new Map<number, DLDeviceDesc[]>([
  [DeviceType.kDLCPU, []],
  [DeviceType.kDLWebGPU, []],
]);

function deviceDesc(deviceType: number, deviceId: number): DLDeviceDesc {
  const cached = DEVICES.get(deviceType);
  const known = cached?.[deviceId];
  if (known !== undefined) return known;
  const device = Object.freeze({ deviceType, deviceId });
  if (cached !== undefined && deviceId < 64) cached[deviceId] = device;
  return device;
}

/**
 * The extent of a C-contiguous tensor of `dtype` (a valid DType, not checked)
 * and `shape` (checked as {@link validateTensorDesc} checks it: BAD_SHAPE naming
 * `${field}` when not an array or an entry is not an integer >= 0, BAD_NDIM
 * above 32 dimensions, SIZE_OVERFLOW when the size is not exact).
 */
export function checkedContiguousExtent(dtype: DType, shape: unknown, field: string): TensorExtent {
  checkShapeArray(shape, field, field);
  checkShapeDims(shape, field);
  return computeExtent(shape as readonly number[], null, dtype, false, field);
}

/**
 * A C-contiguous WebGPU description at byte 0 of GPU pointer `pointer` on
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
  return makeDesc(pointer >>> 0, DeviceType.kDLWebGPU, deviceId, dtype, shape, null, 0);
}
