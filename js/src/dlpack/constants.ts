/**
 * DLPack 1.1 enum values, flag bits and version, as numbers.
 *
 * Source of truth: `wasm/include/webdlpack/dlpack.h`. The unit test
 * `tests/js/constants.test.ts` parses that header and fails if any value here
 * differs, so these are a mirror, never a second definition.
 */

/** The DLPack ABI version this library speaks (`DLPACK_MAJOR_VERSION`.`DLPACK_MINOR_VERSION`). */
export const DLPACK_VERSION: Readonly<{ major: number; minor: number }> = Object.freeze({ major: 1, minor: 1 });

/** `DLDeviceType`: where the bytes of a tensor live (stored as int32 in `DLDevice.device_type`). */
export const DeviceType = {
  kDLCPU: 1,
  kDLCUDA: 2,
  kDLCUDAHost: 3,
  kDLOpenCL: 4,
  kDLVulkan: 7,
  kDLMetal: 8,
  kDLVPI: 9,
  kDLROCM: 10,
  kDLROCMHost: 11,
  kDLExtDev: 12,
  kDLCUDAManaged: 13,
  kDLOneAPI: 14,
  kDLWebGPU: 15,
  kDLHexagon: 16,
  kDLMAIA: 17,
  kDLTrn: 18,
} as const;

/** Name of a device type, e.g. `"kDLWebGPU"`. */
export type DeviceTypeName = keyof typeof DeviceType;

/** `DLDataTypeCode`: what kind of number an element is (stored as uint8 in `DLDataType.code`). */
export const DataTypeCode = {
  kDLInt: 0,
  kDLUInt: 1,
  kDLFloat: 2,
  kDLOpaqueHandle: 3,
  kDLBfloat: 4,
  kDLComplex: 5,
  kDLBool: 6,
  kDLFloat8_e3m4: 7,
  kDLFloat8_e4m3: 8,
  kDLFloat8_e4m3b11fnuz: 9,
  kDLFloat8_e4m3fn: 10,
  kDLFloat8_e4m3fnuz: 11,
  kDLFloat8_e5m2: 12,
  kDLFloat8_e5m2fnuz: 13,
  kDLFloat8_e8m0fnu: 14,
  kDLFloat6_e2m3fn: 15,
  kDLFloat6_e3m2fn: 16,
  kDLFloat4_e2m1fn: 17,
} as const;

/** Name of a data type code, e.g. `"kDLFloat"`. */
export type DataTypeCodeName = keyof typeof DataTypeCode;

/**
 * `DLManagedTensorVersioned.flags` bits (the C field is uint64; only these
 * three low bits are defined, so they are plain numbers here).
 */
export const DLPackFlag = {
  /** `DLPACK_FLAG_BITMASK_READ_ONLY`: the consumer must not write through the tensor. */
  READ_ONLY: 1,
  /** `DLPACK_FLAG_BITMASK_IS_COPIED`: the producer made a copy; the consumer owns it exclusively. */
  IS_COPIED: 2,
  /** `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`: sub-byte elements take one byte each, not packed. */
  IS_SUBBYTE_TYPE_PADDED: 4,
} as const;

/** Every flag bit this version defines; any other set bit is a `BAD_FLAGS` error. */
export const KNOWN_FLAGS_MASK = DLPackFlag.READ_ONLY | DLPackFlag.IS_COPIED | DLPackFlag.IS_SUBBYTE_TYPE_PADDED;

/**
 * Largest `ndim` webdlpack accepts. DLPack itself sets no limit; 32 matches
 * NumPy's and PyTorch's caps and bounds the work a malformed struct can cause.
 */
export const MAX_NDIM = 32;

/** Value → name map of one of the enum objects above. */
function namesByValue<Name extends string>(table: Readonly<Record<Name, number>>): Map<number, Name> {
  return new Map((Object.entries(table) as [Name, number][]).map(([name, value]) => [value, name]));
}

const deviceNames = namesByValue<DeviceTypeName>(DeviceType);
const codeNames = namesByValue<DataTypeCodeName>(DataTypeCode);

/** True if `value` is one of the `DLDeviceType` values in dlpack.h. */
export function isDeviceType(value: number): boolean {
  return deviceNames.has(value);
}

/** Name of a device type for messages, e.g. `deviceTypeName(15) === "kDLWebGPU"`; unknown → `"unknown(99)"`. */
export function deviceTypeName(value: number): string {
  return deviceNames.get(value) ?? `unknown(${value})`;
}

/** True if `value` is one of the `DLDataTypeCode` values in dlpack.h. */
export function isDataTypeCode(value: number): boolean {
  return codeNames.has(value);
}

/** Name of a data type code for messages, e.g. `dataTypeCodeName(2) === "kDLFloat"`; unknown → `"unknown(99)"`. */
export function dataTypeCodeName(value: number): string {
  return codeNames.get(value) ?? `unknown(${value})`;
}
