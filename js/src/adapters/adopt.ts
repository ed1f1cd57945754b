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
import { checkedContiguousExtent, trustedWebGPUDesc } from "../dlpack/desc.js";
import type { DLTensorDesc } from "../dlpack/desc.js";
import type { DType } from "../dlpack/dtype.js";
import type { TensorExtent } from "../dlpack/extent.js";
import type { WebDLPackContext } from "../context/index.js";
import type { Tensor } from "../tensor/index.js";
import { dtypeName } from "./dtypes.js";
import { BufferLease } from "./leases.js";
import { producePrevalidatedGPUTensor } from "./producer.js";

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
  /** Where the shape comes from, for messages, e.g. "ortTensor.dims". */
  shapeField: string;
  /** Give the buffer back to the framework (runs once, after the last holder released). */
  giveBack(): void;
}

interface Adoption {
  lease: BufferLease;
  deviceId: number;
  /** The description every Tensor over this output shares (checked once, at adoption). */
  desc: DLTensorDesc;
  extent: TensorExtent;
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
    return entry !== undefined && !entry.lease.released;
  }

  /**
   * A webdlpack WebGPU Tensor over `output`'s buffer on device `deviceId`; a
   * second call for the same `key` shares the first adoption's lease.
   * Throws DISPOSED without a buffer, BAD_SHAPE / BAD_NDIM / SIZE_OVERFLOW for a
   * bad shape, OUT_OF_BOUNDS when the buffer is smaller than shape × dtype,
   * BAD_DEVICE when `key` was adopted on another device id.
   *
   * One ledger entry per holder: the buffer's pointer is registered untracked
   * (`tracked: false`), and each Tensor over it is a "tensor" entry naming the
   * pointer, the framework and the bytes — what a leak report shows.
   */
  tensor(key: K, output: FrameworkGPUOutput, ctx: WebDLPackContext, deviceId: number): Tensor {
    let entry = this.#entries.get(key);
    if (entry === undefined || entry.lease.released) {
      entry = this.#adopt(key, output, ctx, deviceId);
    } else if (entry.deviceId !== deviceId) {
      throw new WebDLPackError("BAD_DEVICE", `${output.label} was already adopted on another device id`, {
        field: "options.deviceId",
        value: deviceId,
        expected: `${entry.deviceId}`,
      });
    }
    return producePrevalidatedGPUTensor(entry.desc, entry.extent, entry.lease.hold(), this.owner);
  }

  #adopt(key: K, output: FrameworkGPUOutput, ctx: WebDLPackContext, deviceId: number): Adoption {
    const buffer = output.buffer();
    if (buffer === undefined || buffer === null) {
      throw new WebDLPackError("DISPOSED", `${output.label} has no GPU buffer (was it released?)`, {
        field: output.field,
        value: buffer,
        expected: "a GPUBuffer",
      });
    }
    // The framework's shape is the one foreign part: checked here, before anything is registered.
    const extent = checkedContiguousExtent(output.dtype, output.shape, output.shapeField);
    if (buffer.size < extent.nbytes) {
      throw new WebDLPackError("OUT_OF_BOUNDS", `the buffer of ${output.label} is smaller than its shape × dtype`, {
        field: `${output.field}.size`,
        value: buffer.size,
        expected: `>= ${extent.nbytes} (${output.shape.join("x")} × ${dtypeName(output.dtype)})`,
      });
    }
    const pointer = ctx.registerGPUBuffer(buffer, {
      deviceId,
      owned: false,
      owner: this.owner,
      onRelease: () => output.giveBack(),
      tracked: false,
    });
    const lease = new BufferLease(
      () => output.label,
      () => {
        this.#entries.delete(key);
        ctx.freeWebGPU(pointer);
      },
    );
    const entry = { lease, deviceId, desc: trustedWebGPUDesc(pointer, deviceId, output.dtype, output.shape), extent };
    this.#entries.set(key, entry);
    return entry;
  }
}
