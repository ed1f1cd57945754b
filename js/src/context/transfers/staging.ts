/**
 * Staging buffers of one device, kept for reuse across transfers:
 *
 * - the read ring holds MAP_READ | COPY_DST buffers; a buffer is handed out
 *   only while `unmapped` (a mapped buffer can not be a copy destination) and
 *   kept only once unmapped — a readback gives its buffer back still mapped
 *   and the ring unmaps it in a later task, or at once when a readback needs it;
 *   one given back mapped otherwise is destroyed;
 * - the write ring holds MAP_WRITE | COPY_SRC buffers that are already
 *   mapped, so an upload fills one synchronously; after its copy is submitted
 *   the buffer is mapped again in the background (`mapAsync(WRITE)` resolves
 *   once the GPU has read it) and only then becomes available.
 *
 * Size classes, the byte budget and the tracking of what is out: ring.ts.
 */
import { GPUUsage } from "../ground/create.js";
import { createBufferAs, WEBDLPACK_OWNER } from "../ground/meter.js";
import { bufferFacts } from "../ground/buffer-facts.js";
import { LARGER_CLASS_FACTOR, later, Ring, stagingClass, touch, type RingStats } from "./ring.js";

export { STAGING_MIN_BYTES, stagingClass, touch, type RingStats } from "./ring.js";

/** GPUMapMode.READ / WRITE (literals so this module loads where the global is missing). */
const MAP_MODE_READ = 0x0001;
const MAP_MODE_WRITE = 0x0002;

/** MAP_READ | COPY_DST buffers, handed out unmapped. */
export class ReadRing extends Ring {
  protected readonly ready = "unmapped";
  /** Buffers given back still mapped ({@link giveMapped}), unmapped and kept in a later task. */
  readonly #unmapping: GPUBuffer[] = [];
  #unmapQueued = false;
  /**
   * The buffer a readback gave back last, held apart from the kept ones (counted in their bytes): the next readback
   * of its size class takes it without the kept buffers' bookkeeping (a Map and two Set operations, each a cache
   * miss when a page's code runs cold). Mapped until unmapped in the later task, or by the readback that takes it.
   */
  #hot: GPUBuffer | undefined = undefined;
  #hotSize = 0;
  #hotMapped = false;

  protected create(size: number): GPUBuffer {
    return createBufferAs(
      this.device,
      {
        size,
        usage: GPUUsage.MAP_READ | GPUUsage.COPY_DST,
        label: "webdlpack readback staging",
      },
      WEBDLPACK_OWNER,
    );
  }

  /** Make `count` buffers of `bytes`' class and map each once (its pages are then in place), unmapped and kept. */
  async prepare(bytes: number, count: number): Promise<void> {
    const made: GPUBuffer[] = [];
    for (let i = this.missing(bytes, count); i > 0 && this.makeRoom(stagingClass(bytes)); i--)
      made.push(this.make(stagingClass(bytes)));
    await Promise.all(
      made.map(async (buffer) => {
        try {
          await buffer.mapAsync(MAP_MODE_READ);
          touchRead(new Uint8Array(buffer.getMappedRange()));
          buffer.unmap();
        } catch {
          // lost or destroyed meanwhile: give() drops it
        }
        this.give(buffer);
      }),
    );
  }

  /**
   * Take a buffer back: kept if unmapped and within budget, else destroyed — never kept mapped. `unmapped`: the
   * caller has just unmapped it (its mapState is not read again).
   */
  give(buffer: GPUBuffer, unmapped = false): void {
    if (!this.out.delete(buffer)) return;
    if (!unmapped && buffer.mapState !== "unmapped") {
      this.dropOnReturn.delete(buffer);
      this.destroyBuffer(buffer);
      return;
    }
    this.keep(buffer);
  }

  /**
   * Take back a buffer still mapped whose bytes were copied out: it is unmapped and kept in a later task, so the
   * unmap (about 1 µs in dawn.node) is not between the GPU's answer and the caller; it runs while the caller's next
   * transfer waits on the GPU. The last one given back is held as the hot buffer (one), which the next readback of
   * its class takes as it is (unmapping it first if the later task has not yet); others are neither out nor kept
   * until unmapped, and a readback that finds no kept buffer meanwhile unmaps them at once ({@link reclaim}).
   */
  giveMapped(buffer: GPUBuffer): void {
    if (!this.out.delete(buffer)) return;
    if (this.dropOnReturn.size > 0 && this.dropOnReturn.delete(buffer)) {
      this.destroyBuffer(buffer);
      return;
    }
    const size = bufferFacts(buffer).size;
    if (this.#hot === undefined && !this.closed && this.keptBytes + size <= this.maxKeptBytes) {
      this.#hot = buffer;
      this.#hotSize = size;
      this.#hotMapped = true;
      this.keptBytes += size;
    } else {
      this.#unmapping.push(buffer);
    }
    if (!this.#unmapQueued) {
      this.#unmapQueued = true;
      later(() => this.#unmapGiven());
    }
  }

  /**
   * The hot buffer, for a request of its own class, or of a smaller one within {@link LARGER_CLASS_FACTOR}× that
   * has no kept buffer of its own (the 64 KiB buffer setup keeps serves 1 KiB readbacks call after call, without the
   * kept buffers' bookkeeping each time).
   */
  protected override takeHot(size: number): GPUBuffer | undefined {
    const hot = this.#hot;
    if (hot === undefined) return undefined;
    const hotSize = this.#hotSize;
    if (hotSize !== size && (hotSize < size || hotSize > size * LARGER_CLASS_FACTOR || this.keepsOwn(size)))
      return undefined;
    if (this.#hotMapped && !this.#unmapHot()) return undefined;
    this.#hot = undefined;
    this.keptBytes -= hotSize;
    this.reused += 1;
    this.out.add(hot);
    return hot;
  }

  /** Unmap the hot buffer; false (and it is destroyed, the slot empty) when that fails (its device is gone). */
  #unmapHot(): boolean {
    try {
      this.#hot!.unmap();
      this.#hotMapped = false;
      return true;
    } catch {
      this.#dropHot();
      return false;
    }
  }

  #dropHot(): void {
    this.keptBytes -= this.#hotSize;
    this.destroyBuffer(this.#hot!);
    this.#hot = undefined;
    this.#hotMapped = false;
  }

  #unmapGiven(): void {
    this.#unmapQueued = false;
    if (this.#hot !== undefined && this.#hotMapped) this.#unmapHot();
    for (const buffer of this.#unmapping.splice(0)) {
      try {
        buffer.unmap();
      } catch {
        this.destroyBuffer(buffer); // its device is gone: never kept mapped
        continue;
      }
      this.keep(buffer);
    }
  }

  /** Unmap and keep the buffers given back mapped now (a readback needs one before the later task ran). */
  protected override reclaim(): boolean {
    if (this.#unmapping.length === 0 && this.#hot === undefined) return false;
    this.#settleHot();
    this.#unmapGiven();
    return true;
  }

  /** The hot buffer joins the kept ones, unmapped (a request of another class may take it, trims may drop it). */
  #settleHot(): void {
    const hot = this.#hot;
    if (hot !== undefined && (!this.#hotMapped || this.#unmapHot())) {
      this.#hot = undefined;
      this.keptBytes -= this.#hotSize;
      this.keep(hot);
    }
  }

  /** Counts the hot buffer once unmapped, as a kept one (it joins them; a mapped one is not ready yet). */
  override hasReady(bytes: number): boolean {
    if (this.#hot !== undefined && !this.#hotMapped) this.#settleHot();
    return super.hasReady(bytes);
  }

  /** Unmap and keep now what was given back mapped (nothing is left for a later task). */
  unmapNow(): void {
    this.reclaim();
  }

  /** Counts the buffers given back mapped as kept (they are, once unmapped in a moment). */
  override stats(): RingStats {
    const s = super.stats();
    if (this.#hot !== undefined) s.kept += 1; // its bytes are in keptBytes
    for (const buffer of this.#unmapping) {
      s.kept += 1;
      s.keptBytes += bufferFacts(buffer).size;
    }
    return s;
  }

  /** Unmaps the buffers given back mapped first, so they are among those kept or dropped. */
  override keepOnly(bytes: number, count: number): void {
    this.reclaim();
    super.keepOnly(bytes, count);
  }

  /** Also destroys the buffers given back mapped and not yet unmapped. */
  override clear(): void {
    super.clear();
    if (this.#hot !== undefined) this.#dropHot();
    for (const buffer of this.#unmapping.splice(0)) this.destroyBuffer(buffer);
  }

  /** Also counts the hot buffer. */
  override owned(bytes: number): number {
    const hot = this.#hot !== undefined && this.#hotSize === stagingClass(bytes) ? 1 : 0;
    return super.owned(bytes) + hot;
  }
}

/** MAP_WRITE | COPY_SRC buffers, handed out mapped. */
export class WriteRing extends Ring {
  protected readonly ready = "mapped";
  /** Maps in flight of buffers given back ({@link rearm}). */
  readonly #rearming = new Set<Promise<void>>();

  protected create(size: number): GPUBuffer {
    return createBufferAs(
      this.device,
      {
        size,
        usage: GPUUsage.MAP_WRITE | GPUUsage.COPY_SRC,
        mappedAtCreation: true,
        label: "webdlpack upload staging",
      },
      WEBDLPACK_OWNER,
    );
  }

  /**
   * Make `count` buffers of `bytes`' class, touch their pages, unmap and map each again (a range once returned
   * can not be returned again in the same mapping) and keep them once mapped.
   */
  async prepare(bytes: number, count: number): Promise<void> {
    for (let i = this.missing(bytes, count); i > 0 && this.makeRoom(stagingClass(bytes)); i--) {
      const buffer = this.make(stagingClass(bytes));
      touch(new Uint8Array(buffer.getMappedRange()));
      buffer.unmap();
      this.rearm(buffer);
    }
    await this.settled();
  }

  /** Resolves once every buffer given back so far is mapped again (or dropped). */
  settled(): Promise<void> {
    return Promise.all(this.#rearming).then(() => undefined);
  }

  /**
   * Take back a buffer whose copy was just submitted (it is unmapped now): map
   * it again in the background and keep it once mapped. Until then it counts
   * as in use. A failed map (device lost, destroyed) drops it.
   */
  rearm(buffer: GPUBuffer): void {
    if (!this.out.has(buffer)) return;
    const mapped = buffer.mapAsync(MAP_MODE_WRITE).then(
      () => {
        this.#rearming.delete(mapped);
        if (!this.out.delete(buffer)) return; // lost meanwhile: already destroyed
        this.keep(buffer);
      },
      () => {
        this.#rearming.delete(mapped);
        this.dropOnReturn.delete(buffer);
        if (this.out.delete(buffer)) buffer.destroy();
      },
    );
    this.#rearming.add(mapped);
  }
}

/** Read one byte per 4 KiB page (a read mapping: the page faults happen now). */
function touchRead(bytes: Uint8Array): number {
  let x = 0;
  for (let i = 0; i < bytes.length; i += 4096) x |= bytes[i]!;
  return x;
}
