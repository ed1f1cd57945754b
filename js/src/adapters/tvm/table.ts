/**
 * Lending webdlpack's GPUBuffers to tvmjs through its buffer table.
 *
 * tvmjs names a WebGPU tensor's data by an index into one table of GPUBuffers
 * (`webGPUContext.bufferTable`; a DLTensor's `data` is the index). Its device
 * API allocates (`deviceAllocDataSpace(nbytes)` → a new buffer in a free slot)
 * and frees (`deviceFreeDataSpace(index)` → slot cleared, buffer destroyed)
 * when a tensor's last reference goes. To make a tvmjs tensor over a buffer
 * tvmjs did not make, {@link TvmBufferTable.lend} answers the one allocation of
 * a `tvm.empty(…)` with that buffer, and the table's free of that slot — when
 * tvmjs drops the tensor, whoever held it last — clears the slot without
 * destroying the buffer and runs the lender's release, once. tvmjs's
 * `dispose()` (which destroys every buffer in its table) first takes the lent
 * buffers out and releases them.
 *
 * The other way, tvmjs's outputs webdlpack adopted ({@link TvmBufferTable.adopt}) stay tvmjs's until webdlpack's
 * last holder lets go, when the tvmjs tensor is disposed (its buffer back to tvmjs's pool). Should tvmjs be disposed
 * first, its `dispose()` would destroy them under their holders: it first takes them out of its table, and the
 * last holder's release destroys each one instead (tvmjs is gone, nothing else can take it back).
 */
import { WebDLPackError } from "../../errors.js";
import { unwrapDevice } from "../../context/index.js";
import { addQueueUser } from "../../context/transfers/queue-users.js";
import type { BufferLease } from "../leases.js";
import type { TvmWebGPUContextLike } from "./types.js";

/**
 * The webdlpack bytes a slot holds: the pointer of the tensor lent (the source, or the copy made for tvmjs), and a
 * lease on them. The slot is one holder; a tvmjs output over the same slot (an in-place function's result) is
 * another, so the bytes live until the last of them lets go.
 */
export interface LentBytes {
  readonly pointer: number;
  readonly deviceId: number;
  readonly nbytes: number;
  readonly readOnly: boolean;
  readonly lease: BufferLease;
}

/** tvmjs's table internals (TypeScript `private` in tvmjs, plain fields at run time). */
interface TableInternals {
  bufferTable: (GPUBuffer | undefined)[];
  bufferTableFreeId: number[];
}

/** The lent slots of one tvmjs WebGPU context and the hooks that serve them. */
export class TvmBufferTable {
  readonly #gpu: TvmWebGPUContextLike & TableInternals;
  /** slot → the bytes lent there and the slot's hold on them. */
  readonly #lent = new Map<number, { bytes: LentBytes; release: () => void }>();
  #pending: { buffer: GPUBuffer; bytes: LentBytes } | null = null;
  /** slot → how many adopted tvmjs tensors (each held by webdlpack) name it. */
  readonly #adopted = new Map<number, number>();
  /** The buffers of adopted slots taken out of tvmjs's table at its `dispose()`: webdlpack's to destroy. */
  readonly #rescued = new Map<number, GPUBuffer>();
  #disposed = false;

  /** Install the hooks on `gpu` (see {@link TvmBufferTable.of}: once per context). */
  private constructor(gpu: TvmWebGPUContextLike & TableInternals) {
    this.#gpu = gpu;
    const alloc = gpu.deviceAllocDataSpace.bind(gpu);
    const free = gpu.deviceFreeDataSpace.bind(gpu);
    const dispose = gpu.dispose.bind(gpu);
    gpu.deviceAllocDataSpace = (nbytes: number) => this.#alloc(nbytes, alloc);
    gpu.deviceFreeDataSpace = (ptr: number) => this.#free(ptr, free);
    // tvmjs submits its recorded dispatches later: webdlpack's transfers and hand-offs on the device submit them
    // first, so a read of a buffer lent here right after an in-place call sees what the call wrote.
    // Weakly: an instance dropped without dispose() is not kept alive by the device it ran on.
    const instance = new WeakRef(gpu);
    const stopFlushing = addQueueUser(unwrapDevice(gpu.device), () => {
      const live = instance.deref();
      if (live === undefined) stopFlushing();
      else live.flushCommands();
    });
    gpu.dispose = () => {
      stopFlushing();
      for (const slot of [...this.#lent.keys()]) this.#free(slot, free);
      this.#rescueAdopted();
      this.#disposed = true;
      dispose();
    };
  }

  /** True once tvmjs's `dispose()` ran: nothing may call into the instance any more. */
  get disposed(): boolean {
    return this.#disposed;
  }

  /** The table of `gpu`, made (and its hooks installed) on first use. */
  static of(gpu: TvmWebGPUContextLike): TvmBufferTable {
    let table = tables.get(gpu);
    if (table === undefined) {
      const internals = gpu as unknown as Partial<TableInternals>;
      if (!Array.isArray(internals.bufferTable) || !Array.isArray(internals.bufferTableFreeId)) {
        throw new WebDLPackError("UNSUPPORTED", "this tvmjs has no buffer table webdlpack knows", {
          field: "tvm.lib.webGPUContext.bufferTable",
          value: typeof internals.bufferTable,
          expected: "an array of GPUBuffers (@mlc-ai/web-runtime 0.27)",
        });
      }
      table = new TvmBufferTable(gpu as TvmWebGPUContextLike & TableInternals);
      tables.set(gpu, table);
    }
    return table;
  }

  /** Slots holding lent buffers now. */
  get lentCount(): number {
    return this.#lent.size;
  }

  /** What `slot` holds when webdlpack lent it (else undefined). */
  lentAt(slot: number): LentBytes | undefined {
    return this.#lent.get(slot)?.bytes;
  }

  /**
   * Run `make` — which must allocate exactly once through tvmjs's device API,
   * e.g. `tvm.empty(shape, dtype, tvm.webgpu())` — with that allocation
   * answered by `buffer`, the buffer of `bytes`. The slot holds `bytes.lease` until tvmjs frees it; if `make`
   * throws before allocating, the lease gets no holder (the caller releases what it lent).
   */
  lend<T>(buffer: GPUBuffer, bytes: LentBytes, make: () => T): T {
    this.#pending = { buffer, bytes };
    try {
      const made = make();
      if (this.#pending !== null) {
        throw new WebDLPackError("INVALID_ARGUMENT", "tvmjs made the tensor without allocating its data", {
          field: "tvm.empty",
          value: "no allocation",
          expected: "one deviceAllocDataSpace call",
        });
      }
      return made;
    } finally {
      this.#pending = null;
    }
  }

  /**
   * Record that webdlpack adopted a tvmjs tensor whose data is `slot`; returns the release to run when its last
   * webdlpack holder lets go: `dispose` (the tvmjs tensor's) while tvmjs lives, else — tvmjs was disposed and the
   * buffer taken out of its table — the buffer's destruction, once no adopted tensor names the slot any more.
   */
  adopt(slot: number, dispose: () => void): () => void {
    this.#adopted.set(slot, (this.#adopted.get(slot) ?? 0) + 1);
    return () => {
      const left = (this.#adopted.get(slot) ?? 1) - 1;
      if (left > 0) this.#adopted.set(slot, left);
      else this.#adopted.delete(slot);
      if (!this.#disposed) {
        dispose();
        return;
      }
      if (left > 0) return;
      const buffer = this.#rescued.get(slot);
      this.#rescued.delete(slot);
      buffer?.destroy();
    };
  }

  /** At tvmjs's `dispose()`: take the adopted slots' buffers out of its table, so it does not destroy them. */
  #rescueAdopted(): void {
    for (const slot of this.#adopted.keys()) {
      const buffer = this.#gpu.bufferTable[slot];
      if (buffer === undefined) continue;
      this.#gpu.bufferTable[slot] = undefined;
      this.#rescued.set(slot, buffer);
    }
  }

  #alloc(nbytes: number, alloc: (nbytes: number) => number): number {
    const pending = this.#pending;
    if (pending === null) return alloc(nbytes);
    this.#pending = null;
    const release = pending.bytes.lease.hold();
    const slot = this.#gpu.attachToBufferTable(pending.buffer);
    this.#lent.set(slot, { bytes: pending.bytes, release });
    return slot;
  }

  #free(slot: number, free: (ptr: number) => void): void {
    if (this.#rescued.has(slot)) return; // tvmjs, disposed, let go of a buffer webdlpack holds: it is webdlpack's
    const release = this.#lent.get(slot)?.release;
    if (release === undefined) {
      free(slot);
      return;
    }
    this.#lent.delete(slot);
    // Dispatches tvmjs recorded that read or write the buffer go to the queue before it goes back.
    this.#gpu.flushCommands();
    this.#gpu.bufferTable[slot] = undefined;
    this.#gpu.bufferTableFreeId.push(slot);
    release();
  }
}

const tables = new WeakMap<TvmWebGPUContextLike, TvmBufferTable>();
