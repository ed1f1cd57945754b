/**
 * Writing the managed struct of a description webdlpack validated already
 * (a Tensor's own, exported again and again): the exchange fast path.
 *
 * {@link writeManagedTensorVersioned} validates its input before writing, as
 * it must for a description from outside. A Tensor's description was
 * validated when the Tensor was made (against the memory as it was then, and
 * wasm memory never shrinks), so exporting it needs no second validation.
 * The bytes written are the same: one malloc block holding the struct, then
 * the shape, then the strides (row-major ones when the tensor has none);
 * int64 fields go in as two 32-bit halves instead of through BigInt.
 */
import { WebDLPackError } from "../errors.js";
import { DLPACK_VERSION } from "./constants.js";
import type { DLTensorDesc } from "./desc.js";
import { INT64_SIZE, LAYOUT } from "./layout.js";
import type { WasmHost } from "./wasm-host.js";

const TWO_32 = 4294967296;

let viewOf: ArrayBufferLike | null = null;
let heapView: DataView<ArrayBufferLike> = new DataView(new ArrayBuffer(0));

/** A DataView over `buffer`, reused while the buffer stays the same one (growth replaces it). */
function dataView(buffer: ArrayBufferLike): DataView<ArrayBufferLike> {
  if (buffer !== viewOf) {
    heapView = new DataView(buffer);
    viewOf = buffer;
  }
  return heapView;
}

/** A safe integer as a little-endian int64 (two's complement for negative strides). */
function setInt64(view: DataView<ArrayBufferLike>, at: number, value: number): void {
  view.setUint32(at, value >>> 0, true);
  view.setUint32(at + 4, Math.floor(value / TWO_32) >>> 0, true);
}

/**
 * Allocate and fill a managed struct (versioned unless `versioned` is false)
 * for `desc`, which must be a description webdlpack validated (a Tensor's),
 * with `data`, `byteOffset` and `strides` as given (the Tensor's own, or those
 * of a C-contiguous copy of it: the copy's address, 0, null). `flags` must be known DLPack
 * flag bits (0 for the legacy struct); `deleter` a function-table index.
 * Returns the struct's address; OUT_OF_MEMORY if malloc fails.
 */
export function writeManagedTrusted(
  host: WasmHost,
  desc: DLTensorDesc,
  data: number,
  byteOffset: number,
  strides: readonly number[] | null,
  deleter: number,
  flags: number,
  versioned: boolean,
): number {
  const L = versioned ? LAYOUT.DLManagedTensorVersioned : LAYOUT.DLManagedTensor;
  const ndim = desc.ndim;
  const arrayBytes = ndim * INT64_SIZE;
  const total = L.size + 2 * arrayBytes;
  const addr = host.malloc(total) >>> 0;
  if (addr === 0 || addr % L.align !== 0) {
    if (addr !== 0) host.free(addr);
    throw new WebDLPackError(
      addr === 0 ? "OUT_OF_MEMORY" : "INVALID_POINTER",
      `malloc(${total}) failed for a managed tensor`,
      {
        field: "malloc",
        value: addr === 0 ? total : addr,
        expected: `an address aligned to ${L.align}`,
      },
    );
  }
  const view = dataView(host.buffer); // after malloc, which may have grown memory
  const shapeAt = addr + L.size;
  const stridesAt = shapeAt + arrayBytes; // as writeManagedTensorVersioned lays it out (also for ndim 0)
  let step = 1;
  for (let i = ndim - 1; i >= 0; i--) {
    const extent = desc.shape[i]!;
    setInt64(view, shapeAt + i * INT64_SIZE, extent);
    setInt64(view, stridesAt + i * INT64_SIZE, strides === null ? step : strides[i]!);
    step *= extent;
  }
  const T = addr + L.dl_tensor;
  const D = LAYOUT.DLTensor;
  view.setUint32(T + D.data, data >>> 0, true);
  view.setInt32(T + D.device + LAYOUT.DLDevice.device_type, desc.device.deviceType, true);
  view.setInt32(T + D.device + LAYOUT.DLDevice.device_id, desc.device.deviceId, true);
  view.setInt32(T + D.ndim, ndim, true);
  view.setUint8(T + D.dtype + LAYOUT.DLDataType.code, desc.dtype.code);
  view.setUint8(T + D.dtype + LAYOUT.DLDataType.bits, desc.dtype.bits);
  view.setUint16(T + D.dtype + LAYOUT.DLDataType.lanes, desc.dtype.lanes, true);
  view.setUint32(T + D.shape, shapeAt, true);
  view.setUint32(T + D.strides, stridesAt, true);
  setInt64(view, T + D.byte_offset, byteOffset);
  view.setUint32(addr + L.manager_ctx, 0, true);
  view.setUint32(addr + L.deleter, deleter >>> 0, true);
  if (versioned) {
    const V = LAYOUT.DLManagedTensorVersioned;
    view.setUint32(addr + V.version + LAYOUT.DLPackVersion.major, DLPACK_VERSION.major, true);
    view.setUint32(addr + V.version + LAYOUT.DLPackVersion.minor, DLPACK_VERSION.minor, true);
    view.setUint32(addr + V.flags, flags >>> 0, true);
    view.setUint32(addr + V.flags + 4, 0, true);
  }
  return addr;
}
