/**
 * The JS decoder fuzzer: random DLManagedTensorVersioned / DLManagedTensor
 * structs (fields from tables of edge values or random, pointers near and past
 * the memory end) decoded with readManagedTensorVersioned / readManagedTensor.
 * Each must decode, or throw a WebDLPackError naming a field — never another
 * error. An accepted CPU tensor must lie inside the memory, checked here with
 * BigInt arithmetic independently of the codec.
 * Short mode: tests/js/fuzz-decoder.test.ts; long mode: `make fuzz` (scripts/fuzz.mjs).
 */
import { WebDLPackError } from "../../../js/src/errors.js";
import { LAYOUT, readManagedTensor, readManagedTensorVersioned } from "../../../js/src/dlpack/index.js";

/** What one run saw. */
export interface FuzzStats {
  cases: number;
  accepted: number;
  refused: number;
  /** Outcomes that broke the contract (each also in `failures`, the first 10). */
  wrong: number;
  failures: string[];
}

const EXTENTS = [0n, 1n, 1n, 2n, 3n, 5n, 64n, 1000n, 1n << 31n, (1n << 53n) - 1n, 1n << 53n, 1n << 62n, -1n];
const STRIDES = [0n, 1n, 1n, 2n, -1n, -3n, 1000n, 1n << 40n, (1n << 53n) - 1n, 1n << 53n, -(1n << 63n)];
const BITS = [0, 1, 2, 3, 4, 6, 8, 8, 12, 16, 16, 24, 32, 32, 64, 128, 255];
const LANES = [0, 1, 1, 1, 2, 3, 4, 16, 65535];
const OFFSETS = [0n, 0n, 0n, 4n, 12n, 4096n, 65536n, (1n << 53n) - 1n, 1n << 53n, (1n << 64n) - 8n];

/** Run until `maxCases` structs (0: no limit) or `seconds` (0: no limit). */
export function fuzzDecoder(options: {
  seed: number;
  maxCases?: number;
  seconds?: number;
  memorySize?: number;
}): FuzzStats {
  let state = options.seed >>> 0 || 1;
  const rand = (): number => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
  const below = (n: number): number => rand() % n;
  const pick = <T>(values: readonly T[]): T => values[below(values.length)]!;
  const randomBig = (): bigint => (BigInt(rand()) << 32n) | BigInt(rand());
  const size = options.memorySize ?? 65536;
  const memory = new ArrayBuffer(size);
  const bytes = new Uint8Array(memory);
  const dv = new DataView(memory);
  const stats: FuzzStats = { cases: 0, accepted: 0, refused: 0, wrong: 0, failures: [] };
  const fail = (why: string): void => {
    stats.wrong++;
    if (stats.failures.length < 10) stats.failures.push(`seed ${options.seed} case ${stats.cases}: ${why}`);
  };
  const deadline = options.seconds ? performance.now() + options.seconds * 1000 : Infinity;
  const maxCases = options.maxCases ?? 0;
  const near = (end: number): number => {
    const r = below(8);
    if (r === 0) return end - below(80);
    if (r === 1) return end + below(80);
    if (r === 2) return rand();
    return 8 * (32 + below((end >> 3) - 64));
  };
  for (; maxCases === 0 || stats.cases < maxCases; stats.cases++) {
    if ((stats.cases & 255) === 0 && performance.now() >= deadline) break;
    bytes.fill(0, 0, 4096);
    const versioned = below(4) !== 0;
    const M = versioned ? LAYOUT.DLManagedTensorVersioned : LAYOUT.DLManagedTensor;
    const address = below(16) === 0 ? near(size) : 256;
    const ndim = below(16) < 12 ? below(5) : below(2) ? 32 + below(2) : rand() | 0;
    const count = ndim >= 0 && ndim <= 40 ? ndim : 0;
    const shapeAt = below(16) === 0 ? near(size) : below(32) === 0 ? 0 : 1024;
    const stridesAt = below(2) ? 0 : below(16) === 0 ? near(size) : 2048;
    const rowMajor = below(2) === 0;
    const shape: bigint[] = [];
    for (let i = 0; i < count; i++)
      shape.push(below(3) === 0 ? (below(4) ? pick(EXTENTS) : randomBig()) : BigInt(1 + below(4)));
    const strides: bigint[] = new Array<bigint>(count);
    let step = 1n;
    for (let i = count - 1; i >= 0; i--) {
      strides[i] = rowMajor && below(4) ? step : below(4) ? pick(STRIDES) : randomBig();
      step *= shape[i]! > 0n && shape[i]! < 8n ? shape[i]! : 1n;
    }
    const put64 = (at: number, v: bigint): void => {
      if (at > 0 && at + 8 <= size) dv.setBigInt64(at, BigInt.asIntN(64, v), true);
    };
    shape.forEach((v, i) => put64(shapeAt + 8 * i, v));
    if (stridesAt !== 0) strides.forEach((v, i) => put64(stridesAt + 8 * i, v));
    const data = below(6) === 0 ? 0 : below(5) === 0 ? size - below(64) : below(5) === 0 ? rand() : below(size);
    const flags = below(8) === 0 ? randomBig() >> BigInt(below(64)) : BigInt(below(8));
    if (address > 0 && address + M.size <= size && address % 8 === 0) {
      if (versioned) {
        dv.setUint32(address, below(8) === 0 ? below(3) : 1, true);
        dv.setUint32(address + 4, below(4), true);
        dv.setBigUint64(address + LAYOUT.DLManagedTensorVersioned.flags, flags, true);
      }
      const T = address + M.dl_tensor;
      const L = LAYOUT.DLTensor;
      dv.setUint32(T + L.data, data >>> 0, true);
      dv.setInt32(T + L.device, below(8) === 0 ? rand() | 0 : below(4) === 0 ? below(20) : 1, true);
      dv.setInt32(T + L.device + 4, below(8) === 0 ? rand() | 0 : 0, true);
      dv.setInt32(T + L.ndim, ndim, true);
      dv.setUint8(T + L.dtype, below(8) === 0 ? below(256) : below(18));
      dv.setUint8(T + L.dtype + 1, below(4) === 0 ? below(256) : pick(BITS));
      dv.setUint16(T + L.dtype + 2, below(4) === 0 ? below(65536) : pick(LANES), true);
      dv.setUint32(T + L.shape, shapeAt >>> 0, true);
      dv.setUint32(T + L.strides, stridesAt >>> 0, true);
      dv.setBigUint64(T + L.byte_offset, BigInt.asUintN(64, below(4) === 0 ? randomBig() : pick(OFFSETS)), true);
    }
    let desc: ReturnType<typeof readManagedTensor>;
    try {
      desc = versioned ? readManagedTensorVersioned(memory, address) : readManagedTensor(memory, address);
    } catch (err) {
      stats.refused++;
      if (!(err instanceof WebDLPackError) || !err.field) fail(`not a WebDLPackError naming a field: ${String(err)}`);
      continue;
    }
    stats.accepted++;
    const why = outsideMemory(desc, size);
    if (why !== null) fail(why);
  }
  return stats;
}

/** Null when an accepted tensor is well-formed and (CPU) inside memory; else what is wrong. */
function outsideMemory(desc: ReturnType<typeof readManagedTensor>, size: number): string | null {
  if (desc.ndim < 0 || desc.ndim > 32 || desc.dtype.lanes < 1)
    return `accepted ndim ${desc.ndim}, lanes ${desc.dtype.lanes}`;
  if (desc.device.deviceType !== 1) return null;
  let count = 1n;
  for (const d of desc.shape) count *= BigInt(d);
  if (count === 0n) return null;
  let lo = 0n;
  let hi = count - 1n;
  if (desc.strides !== null) {
    hi = 0n;
    desc.strides.forEach((s, i) => {
      const reach = (BigInt(desc.shape[i]!) - 1n) * BigInt(s);
      if (reach < 0n) lo += reach;
      else hi += reach;
    });
  }
  const bits = BigInt(desc.dtype.bits * desc.dtype.lanes);
  const packed = bits % 8n !== 0n && (desc.flags & 4) === 0;
  const floorDiv = (a: bigint, b: bigint): bigint => (a >= 0n ? a / b : -((-a + b - 1n) / b));
  const loByte = packed ? floorDiv(lo * bits, 8n) : lo * ((bits + 7n) / 8n);
  const hiByte = packed ? ((hi + 1n) * bits + 7n) / 8n : (hi + 1n) * ((bits + 7n) / 8n);
  const base = BigInt(desc.data) + BigInt(desc.byteOffset);
  if (base + loByte < 0n || base + hiByte > BigInt(size)) {
    return `accepted a CPU tensor reaching bytes [${base + loByte}, ${base + hiByte}) of a ${size}-byte memory`;
  }
  return null;
}
