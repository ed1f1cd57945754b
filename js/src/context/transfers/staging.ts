/**
 * Staging buffers of one device, kept for reuse across transfers:
 *
 * - the read ring holds MAP_READ | COPY_DST buffers; a buffer is handed out
 *   only while `unmapped` (a mapped buffer can not be a copy destination) and
 *   taken back only once unmapped — a mapped one is destroyed instead;
 * - the write ring holds MAP_WRITE | COPY_SRC buffers that are already
 *   mapped, so an upload fills one synchronously; after its copy is submitted
 *   the buffer is mapped again in the background (`mapAsync(WRITE)` resolves
 *   once the GPU has read it) and only then becomes available.
 *
 * Buffers are kept by power-of-two size class, up to a byte budget per ring;
 * past it the least recently kept buffers are destroyed (through the caller's
 * `destroy`), so a run of large transfers keeps its own size class warm. Every buffer handed out is tracked until it comes back, so a lost
 * device can destroy (and so unmap) all of them.
 */
import { GPUUsage } from "../allocation/create.js";

/** GPUMapMode.WRITE (a literal so this module loads where the global is missing). */
const MAP_MODE_WRITE = 0x0002;

/** Smallest staging buffer. */
export const STAGING_MIN_BYTES = 256;

/** Power-of-two size class of a request (at least {@link STAGING_MIN_BYTES}). */
export function stagingClass(bytes: number): number {
  return Math.max(STAGING_MIN_BYTES, 2 ** Math.ceil(Math.log2(Math.max(bytes, 1))));
}

/** Counters of one ring (for stats and tests). */
export interface RingStats {
  /** Buffers kept, ready to hand out. */
  kept: number;
  /** Their bytes. */
  keptBytes: number;
  /** Handed out and not yet back (write ring: including those being mapped again). */
  inUse: number;
  /** Buffers created since the ring was made. */
  created: number;
  /** Buffers handed out from the ring instead of created. */
  reused: number;
}

/** What both rings share: size classes, a byte budget (least recently kept dropped first), tracking of what is out. */
abstract class Ring {
  protected readonly device: GPUDevice;
  /** Kept buffers by size class, and all of them in the order they were kept (for eviction). */
  protected readonly free = new Map<number, GPUBuffer[]>();
  protected readonly order = new Set<GPUBuffer>();
  protected readonly out = new Set<GPUBuffer>();
  protected readonly destroyBuffer: (buffer: GPUBuffer) => void;
  protected keptBytes = 0;
  protected closed = false;
  created = 0;
  reused = 0;

  constructor(
    device: GPUDevice,
    destroy: (buffer: GPUBuffer) => void,
    readonly maxKeptBytes: number,
  ) {
    this.device = device;
    this.destroyBuffer = destroy;
  }

  /** The map state a kept buffer must be in to be handed out. */
  protected abstract readonly ready: GPUBufferMapState;

  /** A new buffer of `size` (in the `ready` state). */
  protected abstract create(size: number): GPUBuffer;

  /** A buffer of at least `bytes` (its size class) in the `ready` state: a kept one, else a new one. */
  take(bytes: number): GPUBuffer {
    const size = stagingClass(bytes);
    const stack = this.free.get(size);
    while (stack !== undefined && stack.length > 0) {
      const buffer = stack.pop()!;
      this.order.delete(buffer);
      this.keptBytes -= buffer.size;
      if (buffer.mapState === this.ready) {
        this.reused += 1;
        this.out.add(buffer);
        return buffer;
      }
      this.destroyBuffer(buffer);
    }
    this.created += 1;
    const buffer = this.create(size);
    this.out.add(buffer);
    return buffer;
  }

  /** Keep `buffer`, dropping the least recently kept ones over the budget; one larger than the budget is destroyed. */
  protected keep(buffer: GPUBuffer): void {
    if (this.closed || buffer.size > this.maxKeptBytes) {
      this.destroyBuffer(buffer);
      return;
    }
    for (const old of this.order) {
      if (this.keptBytes + buffer.size <= this.maxKeptBytes) break;
      this.order.delete(old);
      const stack = this.free.get(old.size)!;
      stack.splice(stack.indexOf(old), 1);
      this.keptBytes -= old.size;
      this.destroyBuffer(old);
    }
    const stack = this.free.get(buffer.size) ?? [];
    stack.push(buffer);
    this.free.set(buffer.size, stack);
    this.order.add(buffer);
    this.keptBytes += buffer.size;
  }

  stats(): RingStats {
    return {
      kept: this.order.size,
      keptBytes: this.keptBytes,
      inUse: this.out.size,
      created: this.created,
      reused: this.reused,
    };
  }

  /** Destroy what is kept (the device is being unregistered); buffers out come back to be destroyed. */
  drain(): void {
    this.closed = true;
    for (const b of this.order) this.destroyBuffer(b);
    this.free.clear();
    this.order.clear();
    this.keptBytes = 0;
  }

  /** Destroy a buffer that failed mid-transfer (never reused). */
  discard(buffer: GPUBuffer): void {
    if (this.out.delete(buffer)) buffer.destroy();
  }

  /** The device was lost: destroy everything, kept and out (destroy also unmaps). */
  lose(): void {
    this.drain();
    for (const b of this.out) b.destroy();
    this.out.clear();
  }
}

/** MAP_READ | COPY_DST buffers, handed out unmapped. */
export class ReadRing extends Ring {
  protected readonly ready = "unmapped";

  protected create(size: number): GPUBuffer {
    return this.device.createBuffer({
      size,
      usage: GPUUsage.MAP_READ | GPUUsage.COPY_DST,
      label: "webdlpack readback staging",
    });
  }

  /** Take a buffer back: kept if unmapped and within budget, else destroyed — never kept mapped. */
  give(buffer: GPUBuffer): void {
    if (!this.out.delete(buffer)) return;
    if (buffer.mapState !== "unmapped") {
      this.destroyBuffer(buffer);
      return;
    }
    this.keep(buffer);
  }
}

/** MAP_WRITE | COPY_SRC buffers, handed out mapped. */
export class WriteRing extends Ring {
  protected readonly ready = "mapped";

  protected create(size: number): GPUBuffer {
    return this.device.createBuffer({
      size,
      usage: GPUUsage.MAP_WRITE | GPUUsage.COPY_SRC,
      mappedAtCreation: true,
      label: "webdlpack upload staging",
    });
  }

  /**
   * Take back a buffer whose copy was just submitted (it is unmapped now): map
   * it again in the background and keep it once mapped. Until then it counts
   * as in use. A failed map (device lost, destroyed) drops it.
   */
  rearm(buffer: GPUBuffer): void {
    if (!this.out.has(buffer)) return;
    buffer.mapAsync(MAP_MODE_WRITE).then(
      () => {
        if (!this.out.delete(buffer)) return; // lost meanwhile: already destroyed
        this.keep(buffer);
      },
      () => {
        if (this.out.delete(buffer)) buffer.destroy();
      },
    );
  }
}
