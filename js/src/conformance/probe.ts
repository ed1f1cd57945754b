/**
 * The kit's own tools: a failure type, typed-error expectations, and a reader
 * and writer of DLManagedTensorVersioned at the wasm32 offsets of docs/spec.md T1
 * (written out here, independent of the codec it checks).
 */
import { valueText } from "../describe-value.js";
import { ErrorCode, type ErrorCodeName } from "../errors.js";
import type { WasmHost } from "../dlpack/wasm-host.js";

/** A check's failure: what was expected, what happened. */
export class CheckFailure extends Error {
  override readonly name = "CheckFailure";
}

/** A check that cannot run with what it was given. */
export class CheckSkipped extends Error {
  override readonly name = "CheckSkipped";
}

/** Fail unless `cond`. */
export function ensure(cond: unknown, message: string): asserts cond {
  if (!cond) throw new CheckFailure(message);
}

/** Text of a value for messages: large integers (pointers) in hex, errors as `Name: message`, else as errors show values. */
export function show(v: unknown): string {
  if (typeof v === "number" && Number.isInteger(v) && v > 0xffff) return `0x${v.toString(16)}`;
  if (v instanceof Error) return `${v.name}: ${v.message}`;
  return valueText(v);
}

/** Fail unless `err` is a typed error of `code` (name and number of the shared table, E1); `field` must appear in its field. */
export function ensureCode(err: unknown, code: ErrorCodeName, what: string, field?: string): void {
  const e = err as { code?: unknown; errno?: unknown; field?: unknown } | null;
  ensure(e !== null && typeof e === "object", `${what}: expected a ${code} error, got ${show(err)}`);
  ensure(e.code === code, `${what}: expected ${code}, got ${e.code === undefined ? show(err) : String(e.code)}`);
  ensure(e.errno === ErrorCode[code], `${what}: ${code} must have errno ${ErrorCode[code]}, got ${show(e.errno)}`);
  if (field !== undefined)
    ensure(
      typeof e.field === "string" && e.field.includes(field),
      `${what}: the ${code} error must name ${field} in its field, got ${show(e.field)}`,
    );
}

/** Call `fn` (sync or async) and require it to fail with `code`. */
export async function expectCode(fn: () => unknown, code: ErrorCodeName, what: string, field?: string): Promise<void> {
  let result: unknown;
  try {
    result = await fn();
  } catch (err) {
    ensureCode(err, code, what, field);
    return;
  }
  throw new CheckFailure(`${what}: expected ${code}, but it returned ${show(result)}`);
}

/** Call `fn` and require a synchronous throw of `code` (not a returned Promise). */
export function expectSyncCode(fn: () => unknown, code: ErrorCodeName, what: string): void {
  let result: unknown;
  try {
    result = fn();
  } catch (err) {
    ensureCode(err, code, what);
    return;
  }
  if (result && typeof (result as Promise<unknown>).then === "function")
    (result as Promise<unknown>).catch(() => undefined);
  throw new CheckFailure(`${what}: expected a synchronous ${code}, but it returned ${show(result)}`);
}

/** Offsets of docs/spec.md T1 (wasm32). */
export const T1 = Object.freeze({
  managedSize: 64,
  version: 0,
  managerCtx: 8,
  deleter: 12,
  flags: 16,
  dlTensor: 24,
  data: 0,
  deviceType: 4,
  deviceId: 8,
  ndim: 12,
  dtypeCode: 16,
  dtypeBits: 17,
  dtypeLanes: 18,
  shape: 20,
  strides: 24,
  byteOffset: 32,
});

/** A DLManagedTensorVersioned as read at the T1 offsets. */
export interface RawManaged {
  major: number;
  minor: number;
  managerCtx: number;
  deleter: number;
  flags: bigint;
  data: number;
  deviceType: number;
  deviceId: number;
  ndim: number;
  dtype: { code: number; bits: number; lanes: number };
  shapePtr: number;
  stridesPtr: number;
  shape: number[];
  strides: number[] | null;
  byteOffset: bigint;
}

/** Read the struct at `address` (shape/strides too when the pointers are inside memory). */
export function readRaw(host: WasmHost, address: number): RawManaged {
  const size = host.buffer.byteLength;
  ensure(
    address > 0 && address % 8 === 0 && address + T1.managedSize <= size,
    `the struct address ${show(address)} must be nonzero, 8-aligned and inside the memory (${size} bytes)`,
  );
  const v = new DataView(host.buffer);
  const t = address + T1.dlTensor;
  const ndim = v.getInt32(t + T1.ndim, true);
  const shapePtr = v.getUint32(t + T1.shape, true);
  const stridesPtr = v.getUint32(t + T1.strides, true);
  const readArray = (ptr: number): number[] | null => {
    if (ptr === 0 || ndim < 0 || ndim > 32 || ptr % 8 !== 0 || ptr + 8 * ndim > size) return null;
    return Array.from({ length: ndim }, (_, i) => Number(v.getBigInt64(ptr + 8 * i, true)));
  };
  return {
    major: v.getUint32(address + T1.version, true),
    minor: v.getUint32(address + T1.version + 4, true),
    managerCtx: v.getUint32(address + T1.managerCtx, true),
    deleter: v.getUint32(address + T1.deleter, true),
    flags: v.getBigUint64(address + T1.flags, true),
    data: v.getUint32(t + T1.data, true),
    deviceType: v.getInt32(t + T1.deviceType, true),
    deviceId: v.getInt32(t + T1.deviceId, true),
    ndim,
    dtype: {
      code: v.getUint8(t + T1.dtypeCode),
      bits: v.getUint8(t + T1.dtypeBits),
      lanes: v.getUint16(t + T1.dtypeLanes, true),
    },
    shapePtr,
    stridesPtr,
    shape: readArray(shapePtr) ?? [],
    strides: readArray(stridesPtr),
    byteOffset: v.getBigUint64(t + T1.byteOffset, true),
  };
}

/** How {@link writeRaw} builds a CPU float32 tensor for a consumer. */
export interface RawSpec {
  shape: readonly number[];
  values: readonly number[];
  major?: number;
  flags?: bigint;
  /** false: strides NULL (a pre-1.2 producer). Default true. */
  strides?: boolean;
  /** true: data placed 4 bytes before memory's end, so the elements reach past it (OUT_OF_BOUNDS). */
  pastEnd?: boolean;
}

/** A struct the kit made, with its deleter's call count. */
export interface RawTensor {
  address: number;
  /** Times the deleter ran. */
  readonly deleterCalls: number;
}

/** Write a DLManagedTensorVersioned (CPU float32) into `host`, with a counting deleter that frees what it allocated. */
export function writeRaw(host: WasmHost, spec: RawSpec): RawTensor {
  const ndim = spec.shape.length;
  const count = spec.values.length;
  const block = host.malloc(T1.managedSize + 16 * Math.max(ndim, 1));
  const data = spec.pastEnd ? 0 : host.malloc(Math.max(4 * count, 4));
  ensure(block !== 0 && (spec.pastEnd || data !== 0), "the host's malloc failed");
  let calls = 0;
  const deleter = host.addFunction((self: number) => {
    calls++;
    if (calls === 1) {
      if (data) host.free(data);
      host.free(self >>> 0);
      host.removeFunction(deleter);
    }
  });
  const v = new DataView(host.buffer);
  const t = block + T1.dlTensor;
  const shapePtr = block + T1.managedSize;
  const stridesPtr = shapePtr + 8 * ndim;
  v.setUint32(block + T1.version, spec.major ?? 1, true);
  v.setUint32(block + T1.version + 4, 1, true);
  v.setUint32(block + T1.managerCtx, 0, true);
  v.setUint32(block + T1.deleter, deleter, true);
  v.setBigUint64(block + T1.flags, spec.flags ?? 0n, true);
  // past-end: data placed so the last element is beyond memory's end.
  const dataAddr = spec.pastEnd ? host.buffer.byteLength - 4 : data;
  v.setUint32(t + T1.data, dataAddr, true);
  v.setInt32(t + T1.deviceType, 1, true);
  v.setInt32(t + T1.deviceId, 0, true);
  v.setInt32(t + T1.ndim, ndim, true);
  v.setUint8(t + T1.dtypeCode, 2);
  v.setUint8(t + T1.dtypeBits, 32);
  v.setUint16(t + T1.dtypeLanes, 1, true);
  v.setUint32(t + T1.shape, ndim ? shapePtr : 0, true);
  const withStrides = (spec.strides ?? true) && ndim > 0;
  v.setUint32(t + T1.strides, withStrides ? stridesPtr : 0, true);
  v.setBigUint64(t + T1.byteOffset, 0n, true);
  let stride = 1;
  for (let i = ndim - 1; i >= 0; i--) {
    v.setBigInt64(shapePtr + 8 * i, BigInt(spec.shape[i]!), true);
    v.setBigInt64(stridesPtr + 8 * i, BigInt(stride), true);
    stride *= spec.shape[i]!;
  }
  if (!spec.pastEnd) new Float32Array(host.buffer, data, count).set(spec.values);
  return {
    address: block,
    get deleterCalls() {
      return calls;
    },
  };
}
