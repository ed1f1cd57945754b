/**
 * The cache of freed GPU buffers of one device, keyed by exact (usage, size).
 * The cache mode decides what size a request gets (`simple`: the 16-byte
 * rounded size, `bucket`: a size class, see size-classes.ts), so one exact-key
 * cache serves both. No WebGPU calls here: buffers that do not fit are handed
 * back for the caller to release (through the destroy throttle).
 */
import { mergeCountLimits } from "../../arguments.js";
import type { CacheMode } from "../options.js";

/** The mode a device uses unless `setCacheMode` or `setup({cacheMode})` chose another. */
export const DEFAULT_CACHE_MODE: CacheMode = "bucket";

/** Caps of one device's cache. Buffers freed beyond them are released. */
export interface CacheLimits {
  /** Most buffers kept per class (one size + usage). Default 32. */
  maxBuffersPerClass: number;
  /** Most bytes kept per class. Default 256 MiB. */
  maxBytesPerClass: number;
  /** Most bytes kept in the whole cache of the device. Default 512 MiB. */
  maxCachedBytes: number;
}

/** The default {@link CacheLimits}. */
export const DEFAULT_CACHE_LIMITS: Readonly<CacheLimits> = Object.freeze({
  maxBuffersPerClass: 32,
  maxBytesPerClass: 256 * 2 ** 20,
  maxCachedBytes: 512 * 2 ** 20,
});

/** `limits` merged over `base`, each a safe integer >= 0. Throws INVALID_ARGUMENT naming the field. */
export function mergeCacheLimits(base: Readonly<CacheLimits>, limits: unknown, field: string): CacheLimits {
  return mergeCountLimits(base, limits, field, "cache limit");
}

/** Free buffers of one device, by usage then size; most recently freed is reused first. */
export class BufferCache {
  readonly #classes = new Map<number, Map<number, GPUBuffer[]>>();
  #limits: CacheLimits;
  #buffers = 0;
  #bytes = 0;

  /** An empty cache with the given caps. */
  constructor(limits: Readonly<CacheLimits> = DEFAULT_CACHE_LIMITS) {
    this.#limits = { ...limits };
  }

  /** Buffers held. */
  get buffers(): number {
    return this.#buffers;
  }

  /** Bytes held (sum of `buffer.size`). */
  get bytes(): number {
    return this.#bytes;
  }

  /** The caps in force. */
  get limits(): Readonly<CacheLimits> {
    return this.#limits;
  }

  /** A cached buffer of exactly `size` bytes and `usage`, taken out of the cache; undefined on a miss. */
  take(size: number, usage: number): GPUBuffer | undefined {
    const stack = this.#classes.get(usage)?.get(size);
    const buffer = stack?.pop();
    if (buffer !== undefined) {
      this.#buffers -= 1;
      this.#bytes -= size;
    }
    return buffer;
  }

  /**
   * Keep `buffer` for reuse. Returns false (and keeps nothing) when a cap
   * would be exceeded or the buffer is mapped: the caller then releases it.
   */
  put(buffer: GPUBuffer): boolean {
    const size = buffer.size;
    const mapState = (buffer as { mapState?: string }).mapState;
    if (mapState !== undefined && mapState !== "unmapped") return false;
    if (this.#bytes + size > this.#limits.maxCachedBytes) return false;
    let bySize = this.#classes.get(buffer.usage);
    if (bySize === undefined) {
      bySize = new Map();
      this.#classes.set(buffer.usage, bySize);
    }
    let stack = bySize.get(size);
    if (stack === undefined) {
      stack = [];
      bySize.set(size, stack);
    }
    if (stack.length + 1 > this.#limits.maxBuffersPerClass || (stack.length + 1) * size > this.#limits.maxBytesPerClass)
      return false;
    stack.push(buffer);
    this.#buffers += 1;
    this.#bytes += size;
    return true;
  }

  /** Take `buffer` out of the cache if it is there (e.g. WebGPU reported it invalid). Returns whether it was. */
  remove(buffer: GPUBuffer): boolean {
    const stack = this.#classes.get(buffer.usage)?.get(buffer.size);
    const at = stack?.indexOf(buffer) ?? -1;
    if (stack === undefined || at < 0) return false;
    stack.splice(at, 1);
    this.#buffers -= 1;
    this.#bytes -= buffer.size;
    return true;
  }

  /** Change the caps; returns the buffers that no longer fit (oldest first), for the caller to release. */
  setLimits(limits: Readonly<CacheLimits>): GPUBuffer[] {
    this.#limits = { ...limits };
    const evicted: GPUBuffer[] = [];
    for (const bySize of this.#classes.values()) {
      for (const [size, stack] of bySize) {
        while (
          stack.length > 0 &&
          (stack.length > limits.maxBuffersPerClass ||
            stack.length * size > limits.maxBytesPerClass ||
            this.#bytes > limits.maxCachedBytes)
        ) {
          evicted.push(stack.shift()!);
          this.#buffers -= 1;
          this.#bytes -= size;
        }
      }
    }
    return evicted;
  }

  /** Empty the cache; returns every buffer it held, for the caller to release. */
  drain(): GPUBuffer[] {
    const all: GPUBuffer[] = [];
    for (const bySize of this.#classes.values()) for (const stack of bySize.values()) all.push(...stack);
    this.#classes.clear();
    this.#buffers = 0;
    this.#bytes = 0;
    return all;
  }
}
