/**
 * The allocation state of one device: its cache mode, the buffer cache, the
 * destroy throttle and hit/miss counters per owner (staging buffers for
 * transfers live in transfers/, one set per GPUDevice).
 * The context keeps one per device record and routes every create and every
 * release of an owned buffer through it.
 */
import { allocationSize, GPUUsage } from "../ground/create.js";
import type { CacheMode } from "../options.js";
import { BufferCache, DEFAULT_CACHE_LIMITS, type CacheLimits } from "./buffer-cache.js";
import { DestroyThrottle, DEFAULT_THROTTLE_LIMITS, type ThrottleLimits } from "./destroy-throttle.js";
import type { DeviceRecord } from "../devices/registry.js";
import { bucketSize } from "./size-classes.js";

/** Hits and misses of one owner on one device. */
export interface HitCounts {
  /** Allocations served from the cache. */
  hits: number;
  /** Allocations that created a buffer. */
  misses: number;
}

/**
 * Most owner rows of hit/miss counts one device keeps. Owner labels are chosen
 * by callers (one per model, per request, …), so the rows are bounded: past
 * this many owners, the row of the owner that allocated least recently is
 * dropped (see {@link DeviceAllocator.counts}).
 */
export const MAX_OWNER_COUNT_ROWS = 256;

/** Per-device allocation state. */
export class DeviceAllocator {
  /** The device this serves. */
  readonly record: DeviceRecord;
  /** Freed buffers kept for reuse (simple / bucket). */
  readonly cache: BufferCache;
  /** Where buffers are destroyed. */
  readonly throttle: DestroyThrottle;
  /**
   * Hit/miss counts per owner label, least recently allocating owner first.
   * At most `maxOwnerRows` ({@link MAX_OWNER_COUNT_ROWS} by default): a new
   * owner beyond that evicts the least recently allocating owner's row (its
   * history is lost; live pointers are counted from the pointer table, not here).
   */
  readonly counts: ReadonlyMap<string, Readonly<HitCounts>> = new Map<string, HitCounts>();
  /** The owner whose row is last in {@link counts} (skips re-ordering for repeated allocations). */
  #recentOwner: string | undefined = undefined;
  readonly #maxOwnerRows: number;
  /** Totals. */
  hits = 0;
  /** Totals. */
  misses = 0;
  #mode: CacheMode;

  /** State for `record` in `mode`. */
  constructor(
    record: DeviceRecord,
    mode: CacheMode,
    cacheLimits: Readonly<CacheLimits> = DEFAULT_CACHE_LIMITS,
    throttleLimits: Readonly<ThrottleLimits> = DEFAULT_THROTTLE_LIMITS,
    maxOwnerRows = MAX_OWNER_COUNT_ROWS,
  ) {
    this.record = record;
    this.#maxOwnerRows = Math.max(1, Math.floor(maxOwnerRows));
    this.#mode = mode;
    this.cache = new BufferCache(cacheLimits);
    this.throttle = new DestroyThrottle(record.device, throttleLimits);
  }

  /** The cache mode in force. */
  get mode(): CacheMode {
    return this.#mode;
  }

  /** Switch mode; leaving simple/bucket releases what the cache holds. */
  setMode(mode: CacheMode): void {
    this.#mode = mode;
    if (mode !== "simple" && mode !== "bucket") for (const b of this.cache.drain()) this.throttle.destroy(b);
  }

  /** Change the cache caps, releasing what no longer fits. */
  setCacheLimits(limits: Readonly<CacheLimits>): void {
    for (const b of this.cache.setLimits(limits)) this.throttle.destroy(b);
  }

  /**
   * Buffer size for a request: a bucket class for storage buffers in `bucket`
   * mode (if within `maxBufferSize`), else the 16-byte rounded size.
   */
  sizeFor(nbytes: number, usage: number): number {
    const limit = this.record.device.limits.maxBufferSize;
    if (this.#mode === "bucket" && (usage & GPUUsage.STORAGE) !== 0) {
      const size = bucketSize(nbytes);
      if (size <= limit) return size;
    }
    return allocationSize(nbytes, limit);
  }

  /** A cached buffer of `size` and `usage` (a hit), or undefined (a miss: the caller creates one). Counts both. */
  take(size: number, usage: number, owner: string): GPUBuffer | undefined {
    const buffer = this.#mode === "simple" || this.#mode === "bucket" ? this.cache.take(size, usage) : undefined;
    const counts = this.#countsOf(owner);
    if (buffer !== undefined) {
      this.hits += 1;
      counts.hits += 1;
    } else {
      this.misses += 1;
      counts.misses += 1;
    }
    return buffer;
  }

  /** The counts row of `owner`, moved to (or created at) the most recent end; evicts the oldest rows over the cap. */
  #countsOf(owner: string): HitCounts {
    const rows = this.counts as Map<string, HitCounts>;
    let counts = rows.get(owner);
    if (counts !== undefined && owner === this.#recentOwner) return counts;
    if (counts !== undefined)
      rows.delete(owner); // re-insert: Map order is recency order
    else counts = { hits: 0, misses: 0 };
    rows.set(owner, counts);
    this.#recentOwner = owner;
    if (rows.size > this.#maxOwnerRows) rows.delete(rows.keys().next().value!); // one row in, one row out
    return counts;
  }

  /** Take back a freed buffer this device's allocator created: cache it, or release it per the mode. */
  recycle(buffer: GPUBuffer): void {
    if (this.record.lost) {
      buffer.destroy();
      return;
    }
    switch (this.#mode) {
      case "simple":
      case "bucket":
        if (!this.cache.put(buffer)) this.throttle.destroy(buffer);
        return;
      case "lazyRelease":
        this.throttle.releaseLazily(buffer);
        return;
      default:
        this.throttle.destroy(buffer);
    }
  }

  /** Destroy a buffer that must not be reused (registered, failed, or unwanted). */
  discard(buffer: GPUBuffer): void {
    if (this.record.lost) buffer.destroy();
    else this.throttle.destroy(buffer);
  }

  /** Release everything held (device unregistered). */
  drain(): void {
    for (const b of this.cache.drain()) this.throttle.destroy(b);
  }

  /** The device was lost: drop the cache and staging, stop throttling. */
  lose(): void {
    this.throttle.lose();
    for (const b of this.cache.drain()) b.destroy();
  }
}
