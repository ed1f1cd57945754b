/**
 * Adopting a GPU buffer another framework owns (an ONNX Runtime output, a
 * LiteRT.js output) as webdlpack Tensors, without a copy.
 *
 * One lease per framework tensor: the first adoption registers its buffer in
 * the context's pointer table; every webdlpack Tensor made from it (and, through
 * them, every zero-copy consumer and DLPack export) holds the lease. When the
 * last holder lets go the pointer is freed and the framework tensor is released
 * (ORT `dispose`, LiteRT `delete`) — once. Releasing earlier would let the
 * framework reuse or destroy the buffer under a consumer still reading it.
 *
 * Shape and dtype come from the framework tensor, never from `buffer.size`:
 * frameworks pad their buffers (ORT rounds up; LiteRT may, see its toGpuBuffer).
 */
import { WebDLPackError } from "../errors.js";
import { itemsize, type DType } from "../dlpack/dtype.js";
import type { WebDLPackContext } from "../context/index.js";
import type { Tensor } from "../tensor/index.js";
import { dtypeName } from "./dtypes.js";
import { elementCount } from "./gpu-copy.js";
import { BufferLease } from "./leases.js";
import { produceGPUTensor } from "./producer.js";

/** What an adapter knows about a framework's GPU output. */
export interface FrameworkGPUOutput {
  /** The framework's buffer (read on the first adoption only). */
  buffer(): GPUBuffer | null | undefined;
  dtype: DType;
  shape: readonly number[];
  /** For messages, e.g. "LiteRT output 4x8 float32" (may be a getter: it is read only when a message or the lease's label needs it). */
  readonly label: string;
  /** Where the buffer comes from, for messages, e.g. "litertTensor.toGpuBuffer()". */
  field: string;
  /** Give the buffer back to the framework (runs once, after the last holder released). */
  release(): void;
}

interface Adoption {
  lease: BufferLease;
  pointer: number;
  deviceId: number;
}

/** The adoptions of one framework: framework tensor → its lease and pointer. */
export class GPUOutputAdoptions<K extends object> {
  readonly #entries = new WeakMap<K, Adoption>();
  /** The framework's owner name in the context's ledger (e.g. "litert"). */
  readonly owner: string;

  /** Adoptions recorded under `owner` (the framework's name in the ledger). */
  constructor(owner: string) {
    this.owner = owner;
  }

  /** True while `key` has a live adoption (some holder has not released it). */
  isAdopted(key: K): boolean {
    const entry = this.#entries.get(key);
    return entry !== undefined && !entry.lease.finalized;
  }

  /**
   * A webdlpack WebGPU Tensor over `output`'s buffer on device `deviceId`; a
   * second call for the same `key` shares the first adoption's lease.
   * Throws DISPOSED without a buffer, OUT_OF_BOUNDS when the buffer is smaller
   * than shape × dtype, BAD_DEVICE when `key` was adopted on another device id.
   */
  tensor(key: K, output: FrameworkGPUOutput, ctx: WebDLPackContext, deviceId: number): Tensor {
    let entry = this.#entries.get(key);
    if (entry === undefined || entry.lease.finalized) {
      entry = this.#adopt(key, output, ctx, deviceId);
    } else if (entry.deviceId !== deviceId) {
      throw new WebDLPackError("BAD_DEVICE", `${output.label} was already adopted on another device id`, {
        field: "options.deviceId", value: deviceId, expected: `${entry.deviceId}`,
      });
    }
    const release = entry.lease.retain();
    return produceGPUTensor({ pointer: entry.pointer, deviceId, dtype: output.dtype, shape: output.shape, release, owner: this.owner });
  }

  #adopt(key: K, output: FrameworkGPUOutput, ctx: WebDLPackContext, deviceId: number): Adoption {
    const buffer = output.buffer();
    if (buffer === undefined || buffer === null) {
      throw new WebDLPackError("DISPOSED", `${output.label} has no GPU buffer (was it released?)`, {
        field: output.field, value: buffer, expected: "a GPUBuffer",
      });
    }
    const needed = elementCount(output.shape) * itemsize(output.dtype);
    if (buffer.size < needed) {
      throw new WebDLPackError("OUT_OF_BOUNDS", `the buffer of ${output.label} is smaller than its shape × dtype`, {
        field: `${output.field}.size`, value: buffer.size, expected: `>= ${needed} (${output.shape.join("x")} × ${dtypeName(output.dtype)})`,
      });
    }
    const pointer = ctx.registerGPUBuffer(buffer, { deviceId, owned: false, owner: this.owner, onRelease: () => output.release() });
    const lease = new BufferLease(() => output.label, () => {
      this.#entries.delete(key);
      ctx.freeWebGPU(pointer);
    });
    const entry = { lease, pointer, deviceId };
    this.#entries.set(key, entry);
    return entry;
  }
}
