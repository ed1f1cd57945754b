/**
 * GPU-side copies the adapters need when a zero-copy hand-off is not possible:
 * a strided/offset tensor made contiguous at byte 0 of a new buffer, and the
 * boolean width changes between DLPack (1 byte per element) and TF.js (4 bytes).
 *
 * One compute shader does all three (a `mode` in its parameters). Every launch is
 * validated in JS first (usage, sizes, ranges), so a launch never fails on the
 * GPU side and never writes a wrong answer; the work is submitted on the
 * device's queue at once, so anything the caller queues afterwards sees it.
 */
import { createBufferAs, transfersFor, WEBDLPACK_OWNER } from "../context/index.js";
import { WebDLPackError } from "../errors.js";

/** Largest ndim the shader's parameter block holds (same cap as the DLPack codec). */
export const GPU_COPY_MAX_NDIM = 32;

const MODE_COPY = 0;
const MODE_BOOL8_TO_U32 = 1;
const MODE_U32_TO_BOOL8 = 2;
const WORKGROUP = 64;
const MAX_GROUPS_X = 65535;
const PARAM_WORDS = 8 + 2 * GPU_COPY_MAX_NDIM;

const SHADER = /* wgsl */ `
struct Params {
  mode: u32, ndim: u32, count: u32, itemsize: u32,
  byteOffset: u32, rowInvocations: u32, outWords: u32, outBytes: u32,
  shape: array<u32, ${GPU_COPY_MAX_NDIM}>,
  strides: array<i32, ${GPU_COPY_MAX_NDIM}>,
};
@group(0) @binding(0) var<storage, read> p: Params;
@group(0) @binding(1) var<storage, read> src: array<u32>;
@group(0) @binding(2) var<storage, read_write> dst: array<u32>;

// Byte address in src of element e (row-major index over p.shape).
fn elemByte(e: u32) -> u32 {
  var rem = e;
  var off: i32 = 0;
  for (var k: i32 = i32(p.ndim) - 1; k >= 0; k = k - 1) {
    let extent = p.shape[k];
    off = off + i32(rem % extent) * p.strides[k];
    rem = rem / extent;
  }
  return u32(i32(p.byteOffset) + off * i32(p.itemsize));
}

fn readByte(addr: u32) -> u32 {
  return (src[addr >> 2u] >> ((addr & 3u) * 8u)) & 0xffu;
}

@compute @workgroup_size(${WORKGROUP})
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let w = gid.y * p.rowInvocations + gid.x;
  if (w >= p.outWords) { return; }
  if (p.mode == ${MODE_BOOL8_TO_U32}u) {
    dst[w] = select(0u, 1u, readByte(elemByte(w)) != 0u);
    return;
  }
  var word = 0u;
  for (var b = 0u; b < 4u; b = b + 1u) {
    if (p.mode == ${MODE_COPY}u) {
      let ob = w * 4u + b;
      if (ob >= p.outBytes) { break; }
      let e = ob / p.itemsize;
      word = word | (readByte(elemByte(e) + ob % p.itemsize) << (8u * b));
    } else {
      let e = w * 4u + b;
      if (e >= p.count) { break; }
      let v = src[elemByte(e) >> 2u];
      word = word | (select(0u, 1u, v != 0u) << (8u * b));
    }
  }
  dst[w] = word;
}
`;

/** Where the elements to read are: a buffer plus a strided layout over it. */
export interface GpuSource {
  /** The buffer holding the elements; needs STORAGE usage. */
  buffer: GPUBuffer;
  /** Extents, each >= 0. */
  shape: readonly number[];
  /** Strides in elements (may be negative), or null for C-contiguous. */
  strides: readonly number[] | null;
  /** Bytes from the start of `buffer` to element [0, 0, ...]. */
  byteOffset: number;
  /** Bytes per element. */
  itemsize: number;
}

/** What a conversion produces: element count and output byte size. */
export type GpuCopyKind = "copy" | "bool8-to-u32" | "u32-to-bool8";

const pipelines = new WeakMap<GPUDevice, GPUComputePipeline>();

function pipelineFor(device: GPUDevice): GPUComputePipeline {
  let pipeline = pipelines.get(device);
  if (pipeline === undefined) {
    const module = device.createShaderModule({ code: SHADER, label: "webdlpack.adapters.gpu-copy" });
    pipeline = device.createComputePipeline({
      layout: "auto",
      compute: { module, entryPoint: "main" },
      label: "webdlpack.adapters.gpu-copy",
    });
    pipelines.set(device, pipeline);
  }
  return pipeline;
}

/** Number of elements of `shape` (product of extents). */
export function elementCount(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

/** True if `strides` (elements) describe the C-contiguous layout of `shape` (null counts). */
export function isCContiguous(shape: readonly number[], strides: readonly number[] | null): boolean {
  if (strides === null) return true;
  let expected = 1;
  for (let k = shape.length - 1; k >= 0; k--) {
    const extent = shape[k]!;
    if (extent === 0) return true;
    if (extent !== 1 && strides[k] !== expected) return false;
    expected *= extent;
  }
  return true;
}

/** Lowest and one-past-highest byte a strided tensor touches, relative to the buffer start. */
export function byteExtent(src: Pick<GpuSource, "shape" | "strides" | "byteOffset" | "itemsize">): {
  lo: number;
  hi: number;
} {
  const n = elementCount(src.shape);
  if (n === 0) return { lo: src.byteOffset, hi: src.byteOffset };
  let lo = 0;
  let hi = 0;
  let contiguous = 1;
  for (let k = src.shape.length - 1; k >= 0; k--) {
    const extent = src.shape[k]!;
    const stride = src.strides === null ? contiguous : src.strides[k]!;
    const reach = (extent - 1) * stride;
    if (reach < 0) lo += reach;
    else hi += reach;
    contiguous *= extent;
  }
  return { lo: src.byteOffset + lo * src.itemsize, hi: src.byteOffset + hi * src.itemsize + src.itemsize };
}

/** Output byte size of a conversion of `count` elements of `itemsize` bytes. */
export function outputBytes(kind: GpuCopyKind, count: number, itemsize: number): number {
  if (kind === "copy") return count * itemsize;
  if (kind === "bool8-to-u32") return count * 4;
  return count;
}

function fail(message: string, field: string, value: unknown, expected: string): never {
  throw new WebDLPackError("INVALID_ARGUMENT", message, { field, value, expected });
}

/**
 * Check that `src` can be read by the shader: STORAGE usage, ndim within the cap,
 * every byte it touches inside the buffer, alignment the chosen kind needs.
 */
export function validateGpuSource(kind: GpuCopyKind, src: GpuSource): void {
  const { buffer, shape, strides, byteOffset, itemsize } = src;
  if ((buffer.usage & GPUBufferUsage.STORAGE) === 0) {
    throw new WebDLPackError(
      "UNSUPPORTED",
      "a GPU copy reads its source in a compute shader, which needs STORAGE usage",
      {
        field: "GPUBuffer.usage",
        value: buffer.usage,
        expected: "usage including GPUBufferUsage.STORAGE (0x80)",
      },
    );
  }
  if (shape.length > GPU_COPY_MAX_NDIM)
    fail("too many dimensions for a GPU copy", "shape.length", shape.length, `<= ${GPU_COPY_MAX_NDIM}`);
  if (strides !== null && strides.length !== shape.length)
    fail("strides and shape differ in length", "strides.length", strides.length, `${shape.length}`);
  if (!Number.isSafeInteger(byteOffset) || byteOffset < 0)
    fail("byte offset must be a non-negative integer", "byteOffset", byteOffset, "integer >= 0");
  if (!Number.isInteger(itemsize) || itemsize <= 0)
    fail("item size must be a positive integer", "itemsize", itemsize, "integer > 0");
  if (kind === "u32-to-bool8" && itemsize !== 4) fail("u32 → bool8 reads 4-byte elements", "itemsize", itemsize, "4");
  if (kind === "bool8-to-u32" && itemsize !== 1) fail("bool8 → u32 reads 1-byte elements", "itemsize", itemsize, "1");
  if (kind === "u32-to-bool8" && byteOffset % 4 !== 0)
    fail("4-byte elements must be 4-byte aligned", "byteOffset", byteOffset, "a multiple of 4");
  for (const d of shape)
    if (!Number.isSafeInteger(d) || d < 0) fail("extents must be integers >= 0", "shape", shape, "integers >= 0");
  const { lo, hi } = byteExtent(src);
  const readable = Math.floor(buffer.size / 4) * 4;
  if (elementCount(shape) > 0 && (lo < 0 || hi > readable)) {
    throw new WebDLPackError("OUT_OF_BOUNDS", "the tensor reaches outside its GPU buffer", {
      field: "byteOffset/strides",
      value: `bytes [${lo}, ${hi})`,
      expected: `inside [0, ${readable}) of a ${buffer.size}-byte buffer`,
    });
  }
  if (hi > 2 ** 31) fail("GPU copy addresses are 31-bit in the shader", "byte extent", hi, "<= 2^31");
}

/**
 * Record and submit one conversion from `src` into `dst` (written from byte 0,
 * C-contiguous). `dst` needs STORAGE usage and at least `outputBytes` rounded up
 * to 4 bytes. Returns the number of bytes written. Nothing is read back.
 */
export function runGpuCopy(device: GPUDevice, kind: GpuCopyKind, src: GpuSource, dst: GPUBuffer): number {
  validateGpuSource(kind, src);
  const count = elementCount(src.shape);
  const outBytes = outputBytes(kind, count, src.itemsize);
  const outWords = Math.ceil(outBytes / 4);
  if ((dst.usage & GPUBufferUsage.STORAGE) === 0)
    fail("the destination of a GPU copy needs STORAGE usage", "dst.usage", dst.usage, "usage including STORAGE");
  if (dst.size < outWords * 4) fail("destination buffer too small", "dst.size", dst.size, `>= ${outWords * 4}`);
  if (outWords === 0) return 0;

  const groups = Math.ceil(outWords / WORKGROUP);
  const groupsX = Math.min(groups, MAX_GROUPS_X);
  const groupsY = Math.ceil(groups / groupsX);
  if (groupsY > MAX_GROUPS_X)
    fail(
      "tensor too large for one GPU copy",
      "element count",
      count,
      `<= ${MAX_GROUPS_X * MAX_GROUPS_X * WORKGROUP * 4} bytes`,
    );

  const params = new Uint32Array(PARAM_WORDS);
  const signed = new Int32Array(params.buffer);
  const mode = kind === "copy" ? MODE_COPY : kind === "bool8-to-u32" ? MODE_BOOL8_TO_U32 : MODE_U32_TO_BOOL8;
  params.set([mode, src.shape.length, count, src.itemsize, src.byteOffset, groupsX * WORKGROUP, outWords, outBytes]);
  let contiguous = 1;
  for (let k = src.shape.length - 1; k >= 0; k--) {
    params[8 + k] = src.shape[k]!;
    signed[8 + GPU_COPY_MAX_NDIM + k] = src.strides === null ? contiguous : src.strides[k]!;
    contiguous *= src.shape[k]!;
  }

  const paramBuffer = createBufferAs(
    device,
    {
      size: params.byteLength,
      usage: GPUBufferUsage.STORAGE,
      mappedAtCreation: true,
      label: "webdlpack.adapters.gpu-copy.params",
    },
    WEBDLPACK_OWNER,
  );
  new Uint32Array(paramBuffer.getMappedRange()).set(params);
  paramBuffer.unmap();
  const pipeline = pipelineFor(device);
  const bindGroup = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [
      { binding: 0, resource: { buffer: paramBuffer } },
      { binding: 1, resource: { buffer: src.buffer, offset: 0, size: Math.floor(src.buffer.size / 4) * 4 } },
      { binding: 2, resource: { buffer: dst, offset: 0, size: outWords * 4 } },
    ],
  });
  const encoder = device.createCommandEncoder({ label: "webdlpack.adapters.gpu-copy" });
  const pass = encoder.beginComputePass();
  pass.setPipeline(pipeline);
  pass.setBindGroup(0, bindGroup);
  pass.dispatchWorkgroups(groupsX, groupsY);
  pass.end();
  device.queue.submit([encoder.finish()]);
  paramBuffer.destroy();
  return outBytes;
}

/**
 * Copy a contiguous byte range to byte 0 of `dst` through the device's one GPU
 * copy path (context/transfers/) when WebGPU allows a plain copy (offsets and
 * size multiples of 4, COPY_SRC on the source, COPY_DST on the destination).
 * Returns false, doing nothing, when it does not apply.
 */
export function tryPlainCopy(
  device: GPUDevice,
  src: GPUBuffer,
  srcOffset: number,
  dst: GPUBuffer,
  nbytes: number,
): boolean {
  if (srcOffset % 4 !== 0 || nbytes % 4 !== 0) return false;
  if ((src.usage & GPUBufferUsage.COPY_SRC) === 0 || (dst.usage & GPUBufferUsage.COPY_DST) === 0) return false;
  if (srcOffset + nbytes > src.size || nbytes > dst.size) return false;
  transfersFor(device).copy(src, srcOffset, dst, 0, nbytes);
  return true;
}
