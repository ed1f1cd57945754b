/**
 * The context's per-device allocators and the settings they are made with:
 * the cache mode, cache limits and destroy-throttle limits, page-wide by
 * default or per device (`ctx.setCacheMode`), applied to live allocators
 * and to the ones made later.
 */
import { DEFAULT_CACHE_LIMITS, DEFAULT_CACHE_MODE, mergeCacheLimits, type CacheLimits } from "./buffer-cache.js";
import type { CacheMode } from "../options.js";
import { DEFAULT_THROTTLE_LIMITS, mergeThrottleLimits, type ThrottleLimits } from "./destroy-throttle.js";
import { DeviceAllocator } from "./device-allocator.js";
import type { DeviceRecord } from "../devices/registry.js";

/** What `setCacheMode` changes (checked by the caller, except the limits merged here). */
export interface AllocatorSettingsChange {
  readonly mode: CacheMode;
  readonly deviceId: number | undefined;
  readonly cacheLimits: unknown;
  readonly throttleLimits: unknown;
}

/** Per-device allocators, made on first use with the configured mode and limits. */
export class Allocators {
  readonly #byDevice = new Map<DeviceRecord, DeviceAllocator>();
  #defaultMode: CacheMode = DEFAULT_CACHE_MODE;
  readonly #modeById = new Map<number, CacheMode>();
  #cacheLimits: CacheLimits = { ...DEFAULT_CACHE_LIMITS };
  readonly #cacheLimitsById = new Map<number, CacheLimits>();
  #throttleLimits: ThrottleLimits = { ...DEFAULT_THROTTLE_LIMITS };
  readonly #throttleLimitsById = new Map<number, ThrottleLimits>();

  /** The allocators made so far, by device. */
  get byDevice(): ReadonlyMap<DeviceRecord, DeviceAllocator> {
    return this.#byDevice;
  }

  /** The allocation state of `record`, made on first use with the configured mode and limits. */
  get(record: DeviceRecord): DeviceAllocator {
    let allocator = this.#byDevice.get(record);
    if (allocator === undefined) {
      allocator = new DeviceAllocator(
        record,
        this.modeOf(record.id),
        this.#cacheLimitsById.get(record.id) ?? this.#cacheLimits,
        this.#throttleLimitsById.get(record.id) ?? this.#throttleLimits,
      );
      this.#byDevice.set(record, allocator);
    }
    return allocator;
  }

  /** The allocator of `record` if one was made. */
  existing(record: DeviceRecord): DeviceAllocator | undefined {
    return this.#byDevice.get(record);
  }

  /** Drop the allocator of `record` (device gone); returns it for a last drain or loss. */
  forget(record: DeviceRecord): DeviceAllocator | undefined {
    const allocator = this.#byDevice.get(record);
    this.#byDevice.delete(record);
    return allocator;
  }

  /** The cache mode device `deviceId` uses (or would use). */
  modeOf(deviceId: number): CacheMode {
    return this.#modeById.get(deviceId) ?? this.#defaultMode;
  }

  /** Device `deviceId` uses `mode` from now on (setup's `cacheMode`). */
  setDeviceMode(deviceId: number, mode: CacheMode): void {
    this.#modeById.set(deviceId, mode);
  }

  /** Apply a checked `setCacheMode` call: store the settings, then update the live allocators they cover. */
  apply(change: AllocatorSettingsChange): void {
    const { mode, deviceId } = change;
    const baseCache =
      deviceId === undefined ? this.#cacheLimits : (this.#cacheLimitsById.get(deviceId) ?? this.#cacheLimits);
    const cacheLimits = mergeCacheLimits(baseCache, change.cacheLimits, "options.cacheLimits");
    const baseThrottle =
      deviceId === undefined ? this.#throttleLimits : (this.#throttleLimitsById.get(deviceId) ?? this.#throttleLimits);
    const throttleLimits = mergeThrottleLimits(baseThrottle, change.throttleLimits);
    if (deviceId === undefined) {
      this.#defaultMode = mode;
      this.#cacheLimits = cacheLimits;
      this.#throttleLimits = throttleLimits;
    } else {
      this.#modeById.set(deviceId, mode);
      this.#cacheLimitsById.set(deviceId, cacheLimits);
      this.#throttleLimitsById.set(deviceId, throttleLimits);
    }
    for (const [record, allocator] of this.#byDevice) {
      if (record.lost || !record.current) continue;
      if (deviceId !== undefined ? record.id !== deviceId : this.#modeById.has(record.id)) continue;
      allocator.setMode(mode);
      allocator.setCacheLimits(cacheLimits);
      allocator.throttle.setLimits(throttleLimits);
    }
  }
}
