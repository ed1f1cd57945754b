/**
 * The checks and decoding behind the Tensor factories: each turns its input
 * (a managed struct, a TypedArray, a wasm address, a GPU pointer) into the
 * {@link TensorInit} the Tensor constructor takes, or throws a typed error.
 */
import { DLPACK_PRODUCER } from "./track-tensor.js";
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { requireObject } from "../arguments.js";
import { checkAttached, checkElementType } from "./array-input.js";
import {
  DLPackFlag,
  DeviceType,
  callManagedDeleter,
  checkWasmHost,
  decodeManaged,
  deviceTypeName,
  dtypeOfTypedArray,
  formatDType,
  isSubByte,
  itemsize,
  toAddress,
  toDType,
  validateTensorDesc,
  type DLTensorDesc,
  type TensorExtent,
  type WasmHost,
  type WasmHostMember,
} from "../dlpack/index.js";
import { managedOwnership, Ownership } from "./ownership.js";
import {
  flagsOf,
  type TensorFlags,
  type TensorInit,
  type FromManagedOptions,
  type TensorLayoutInput,
  type TypedArrayTensorOptions,
  type WebGPUTensorInput,
} from "./types.js";

/** WasmHost members `Tensor.fromManaged` uses (memory, and the deleter call). */
const FROM_MANAGED_HOST: readonly WasmHostMember[] = ["buffer", "callVoidPointer"];
/** WasmHost members `Tensor.wasmView` uses. */
const VIEW_HOST: readonly WasmHostMember[] = ["buffer"];

/** A factory's `onRelease` hook after checking it is a function (or absent); INVALID_ARGUMENT naming `field` otherwise. */
function checkOnRelease(onRelease: unknown, field: string): (() => void) | undefined {
  if (onRelease !== undefined && typeof onRelease !== "function") {
    throw new WebDLPackError("INVALID_ARGUMENT", "onRelease must be a function", {
      field,
      value: describeValue(onRelease),
      expected: "() => void, or undefined",
    });
  }
  return onRelease as (() => void) | undefined;
}

/** The DLPack flags a factory input asks for (`readOnly`, `isCopied`). */
function inputFlags(input: { readOnly?: boolean; isCopied?: boolean }): TensorFlags {
  return flagsOf((input.readOnly ? DLPackFlag.READ_ONLY : 0) | (input.isCopied ? DLPackFlag.IS_COPIED : 0));
}

/** Decode the managed struct at `address` (see `Tensor.fromManaged`); ownership moves to the result. */
export function managedInit(host: WasmHost, address: number, options: FromManagedOptions): TensorInit {
  checkWasmHost(host, "host", FROM_MANAGED_HOST);
  requireObject(options, "options", "an object {versioned?, owner?}", "bad fromManaged options");
  const versioned = options.versioned ?? true;
  const addr = toAddress(address);
  let decoded: ReturnType<typeof decodeManaged>;
  try {
    decoded = decodeManaged(host, addr, versioned);
    const t = decoded.desc.device.deviceType;
    if (t !== DeviceType.kDLCPU && t !== DeviceType.kDLWebGPU) {
      throw new WebDLPackError(
        "BAD_DEVICE",
        `webdlpack tensors live on kDLCPU or kDLWebGPU, not ${deviceTypeName(t)}`,
        {
          field: "DLTensor.device.device_type",
          value: t,
          expected: "kDLCPU (1) or kDLWebGPU (15)",
        },
      );
    }
  } catch (err) {
    try {
      callManagedDeleter(host, addr, { versioned });
    } catch {
      // The struct is unreadable: there is no deleter we could call.
    }
    throw err;
  }
  const { desc, extent } = decoded;
  const cpu = desc.device.deviceType === DeviceType.kDLCPU;
  return {
    desc,
    extent,
    storage: cpu ? { kind: "wasm", host } : { kind: "webgpu" },
    flags: flagsOf(decoded.flags),
    owner: managedOwnership(host, addr, decoded.deleter),
    // A GPU tensor holds the producer's GPU bytes: the ledger lists it under the producer's label.
    ...(cpu ? {} : { ledgerOwner: options.owner ?? DLPACK_PRODUCER }),
  };
}

/**
 * A `"js"` tensor over `array`'s bytes (see `Tensor.fromTypedArray`). With
 * `onRelease` the tensor owns it; a refused description runs it before the
 * error (ownership was passed in).
 */
export function typedArrayInit(array: ArrayBufferView | ArrayBuffer, options: TypedArrayTensorOptions): TensorInit {
  requireObject(
    options,
    "options",
    "an object {shape?, dtype?, reinterpret?, readOnly?, isCopied?, onRelease?}",
    "bad fromTypedArray options",
  );
  const onRelease = checkOnRelease(options.onRelease, "options.onRelease");
  let init: TensorInit;
  try {
    init = typedArrayView(array, options);
  } catch (err) {
    onRelease?.();
    throw err;
  }
  return onRelease === undefined ? init : { ...init, owner: new Ownership(onRelease) };
}

/** The description of a `"js"` tensor over `array`'s bytes, owning nothing. */
function typedArrayView(array: ArrayBufferView | ArrayBuffer, options: TypedArrayTensorOptions): TensorInit {
  const isBuffer = array instanceof ArrayBuffer;
  if (!isBuffer && !ArrayBuffer.isView(array)) {
    throw new WebDLPackError("INVALID_ARGUMENT", "expected a TypedArray or ArrayBuffer", {
      field: "array",
      value: describeValue(array),
      expected: "a TypedArray (not a DataView) or an ArrayBuffer with options.dtype",
    });
  }
  const buffer = isBuffer ? array : array.buffer;
  checkAttached(buffer, array);
  const dtype = options.dtype !== undefined ? toDType(options.dtype) : isBuffer ? undefined : dtypeOfTypedArray(array);
  if (dtype === undefined) {
    throw new WebDLPackError("BAD_DTYPE", "an ArrayBuffer carries no element type; pass dtype", {
      field: "dtype",
      value: undefined,
      expected: 'a dtype for the ArrayBuffer, e.g. {dtype: "float32"}',
    });
  }
  if (!isBuffer && options.dtype !== undefined) checkElementType(array, dtype, options.reinterpret === true);
  const offset = isBuffer ? 0 : array.byteOffset;
  const byteLength = array.byteLength;
  const size = itemsize(dtype);
  // Default 1-D: as many elements as the bytes hold (packed for sub-byte dtypes).
  const shape = options.shape ?? [
    isSubByte(dtype) ? Math.floor((byteLength * 8) / (dtype.bits * dtype.lanes)) : Math.floor(byteLength / size),
  ];
  const { desc, extent } = validateTensorDesc(
    { data: offset, device: { deviceType: DeviceType.kDLCPU, deviceId: 0 }, dtype, shape },
    { allowNullData: true, field: "tensor" }, // that the shape covers exactly the array is checked below
  );
  if (extent.nbytes !== byteLength) {
    throw new WebDLPackError("BAD_SHAPE", `shape × ${formatDType(dtype)} does not cover the array`, {
      field: "shape",
      value: shape.join(","),
      expected: `a shape whose bytes equal the array's ${byteLength} (this one needs ${extent.nbytes})`,
    });
  }
  return {
    desc,
    extent,
    storage: { kind: "js", buffer },
    flags: inputFlags(options),
    owner: null,
  };
}

/** A `"wasm"` tensor over bytes in `host` memory, owning nothing (see `Tensor.wasmView`). */
export function wasmViewInit(host: WasmHost, input: TensorLayoutInput & { data: number }): TensorInit {
  checkWasmHost(host, "host", VIEW_HOST);
  requireObject(
    input,
    "input",
    "an object {data, dtype, shape, strides?, byteOffset?, readOnly?}",
    "bad wasmView input",
  );
  const { desc, extent } = validateTensorDesc(
    {
      data: toAddress(input.data, "data"),
      device: { deviceType: DeviceType.kDLCPU, deviceId: 0 },
      dtype: input.dtype,
      shape: input.shape,
      strides: input.strides ?? null,
      byteOffset: input.byteOffset ?? 0,
    },
    { memorySize: host.buffer.byteLength, field: "tensor" },
  );
  return {
    desc,
    extent,
    storage: { kind: "wasm", host },
    flags: inputFlags(input),
    owner: null,
  };
}

/**
 * Internal key of a `Tensor.webgpu` input whose description webdlpack built and checked itself (an adapter's
 * adopted framework output, see {@link prevalidatedWebGPUInput}): {@link webgpuInit} takes its init as it is.
 * Not exported from the package.
 */
const PREVALIDATED: unique symbol = Symbol("webdlpack.tensor.prevalidated");

/** A prevalidated input: the checked description and the hold's release, marked with {@link PREVALIDATED}. */
interface PrevalidatedInput {
  readonly [PREVALIDATED]: true;
  readonly desc: DLTensorDesc;
  readonly extent: TensorExtent;
  readonly release: () => void;
  readonly ledgerOwner: string;
}

const WEBGPU_STORAGE = Object.freeze({ kind: "webgpu" as const });
const NO_FLAGS = flagsOf(0);

/**
 * A `Tensor.webgpu` input for a description made by webdlpack and already checked (desc.ts trustedWebGPUDesc): the
 * Tensor owns it and runs `release` exactly once (as with `Tensor.webgpu({..., onRelease})`), and is a
 * "tensor" entry of the ledger under `ledgerOwner`; nothing is validated a second time.
 */
export function prevalidatedWebGPUInput(
  desc: DLTensorDesc,
  extent: TensorExtent,
  release: () => void,
  ledgerOwner: string,
): WebGPUTensorInput {
  const input: PrevalidatedInput = { [PREVALIDATED]: true, desc, extent, release, ledgerOwner };
  return input as unknown as WebGPUTensorInput;
}

/** A `"webgpu"` tensor naming a GPU pointer (see `Tensor.webgpu`); `onRelease` runs if the input is refused. */
export function webgpuInit(input: WebGPUTensorInput): TensorInit {
  if ((input as Partial<PrevalidatedInput> | null | undefined)?.[PREVALIDATED] === true) {
    const pre = input as unknown as PrevalidatedInput;
    return {
      desc: pre.desc,
      extent: pre.extent,
      storage: WEBGPU_STORAGE,
      flags: NO_FLAGS,
      owner: new Ownership(pre.release),
      ledgerOwner: pre.ledgerOwner,
    };
  }
  requireObject(
    input,
    "input",
    "an object {pointer, deviceId, dtype, shape, strides?, byteOffset?, onRelease?, …}",
    "bad Tensor.webgpu input",
  );
  const onRelease = checkOnRelease(input.onRelease, "onRelease");
  let desc: DLTensorDesc;
  let extent: TensorExtent;
  try {
    const pointer = toAddress(input.pointer, "pointer");
    if (pointer === 0) {
      throw new WebDLPackError("NULL_POINTER", "a GPU pointer is never 0", {
        field: "pointer",
        value: 0,
        expected: "a non-zero GPU pointer",
      });
    }
    ({ desc, extent } = validateTensorDesc(
      {
        data: pointer,
        device: { deviceType: DeviceType.kDLWebGPU, deviceId: input.deviceId },
        dtype: input.dtype,
        shape: input.shape,
        strides: input.strides ?? null,
        byteOffset: input.byteOffset ?? 0,
      },
      { field: "tensor" },
    ));
  } catch (err) {
    onRelease?.();
    throw err;
  }
  return {
    desc,
    extent,
    storage: { kind: "webgpu" },
    flags: inputFlags(input),
    owner: onRelease === undefined ? null : new Ownership(onRelease),
    ledgerOwner: input.owner ?? "js",
  };
}
