/**
 * Destroying GPU buffers without overwhelming the GPU process.
 *
 * Measured here (Chromium 156, Dawn on SwiftShader): `buffer.destroy()` does not
 * give the memory back at once. Dawn frees it when the queue serial current at
 * the destroy completes, and that serial only advances when something is
 * submitted. A loop creating and destroying 16 MiB buffers with no submission
 * grew the GPU process by 16 MiB per buffer (14 GB after ~900) until it died
 * ("A valid external Instance reference no longer exists"), even when every
 * iteration awaited `popErrorScope` or `onSubmittedWorkDone`. Submitting an
 * empty command buffer every 8 destroys kept it at ~140 MB for 1000 cycles.
 *
 * So every destroy goes through a {@link DestroyThrottle}: it destroys, counts
 * the bytes as "pending", and submits a marker (an empty command buffer) plus
 * `onSubmittedWorkDone()` — at once when `markerBytes` are pending, else in a
 * microtask. The bytes stop being pending when the marker's work is done.
 * Buffers in `lazyRelease` mode wait here too until the queue has finished the
 * work submitted before they were freed. Above `maxPendingBytes` pending,
 * async allocation awaits {@link DestroyThrottle.relieve} before creating more.
 */
import { mergeCountLimits } from "../../arguments.js";

/** Budgets of one device's throttle. */
export interface ThrottleLimits {
  /** Pending bytes (destroyed but unconfirmed, plus lazy releases) above which allocation awaits. Default 256 MiB. */
  maxPendingBytes: number;
  /** Destroyed bytes that make the throttle submit a marker synchronously. Default 32 MiB. */
  markerBytes: number;
}

/** The default {@link ThrottleLimits}. */
export const DEFAULT_THROTTLE_LIMITS: Readonly<ThrottleLimits> = Object.freeze({
  maxPendingBytes: 256 * 2 ** 20,
  markerBytes: 32 * 2 ** 20,
});

/** Numbers a throttle reports. */
export interface ThrottleStats {
  /** Buffers waiting for their lazy release (not destroyed yet). */
  lazyBuffers: number;
  /** Their bytes. */
  lazyBytes: number;
  /** Bytes destroyed whose marker has not completed. */
  unconfirmedBytes: number;
  /** Largest lazy + unconfirmed bytes seen. */
  peakPendingBytes: number;
  /** Buffers destroyed through the throttle. */
  destroyed: number;
  /** Markers submitted. */
  markers: number;
  /** Times an allocation had to wait for pending bytes to drain. */
  waits: number;
}

interface LazyItem {
  buffer: GPUBuffer;
  bytes: number;
}

/** The destroy path of one device. */
export class DestroyThrottle {
  readonly #device: GPUDevice;
  #limits: ThrottleLimits;
  #lazy: LazyItem[] = [];
  #lazyBytes = 0;
  #lazyScheduled = false;
  /** Destroyed bytes not yet covered by a submitted marker. */
  #epochBytes = 0;
  #unconfirmed = 0;
  #markerScheduled = false;
  readonly #inflight = new Set<Promise<void>>();
  #dead = false;
  #peak = 0;
  #destroyed = 0;
  #markers = 0;
  #waits = 0;

  /** A throttle for `device`'s queue. */
  constructor(device: GPUDevice, limits: Readonly<ThrottleLimits> = DEFAULT_THROTTLE_LIMITS) {
    this.#device = device;
    this.#limits = { ...limits };
  }

  /** Change the budgets. */
  setLimits(limits: Readonly<ThrottleLimits>): void {
    this.#limits = { ...limits };
  }

  /** Lazy + unconfirmed bytes. */
  get pendingBytes(): number {
    return this.#lazyBytes + this.#unconfirmed;
  }

  /** Whether allocation should wait ({@link relieve}) before creating more. */
  get overBudget(): boolean {
    return !this.#dead && this.pendingBytes > this.#limits.maxPendingBytes;
  }

  /** Destroy `buffer` now and account for its memory until a marker completes. */
  destroy(buffer: GPUBuffer): void {
    const bytes = buffer.size;
    buffer.destroy();
    this.#destroyed += 1;
    if (this.#dead) return;
    this.#epochBytes += bytes;
    this.#unconfirmed += bytes;
    this.#notePeak();
    if (this.#epochBytes >= this.#limits.markerBytes) {
      this.#submitMarker();
    } else if (!this.#markerScheduled) {
      this.#markerScheduled = true;
      queueMicrotask(() => {
        this.#markerScheduled = false;
        this.#submitMarker();
      });
    }
  }

  /** Destroy `buffer` once the work submitted before now has completed (lazyRelease). */
  releaseLazily(buffer: GPUBuffer): void {
    if (this.#dead) {
      this.destroy(buffer);
      return;
    }
    this.#lazy.push({ buffer, bytes: buffer.size });
    this.#lazyBytes += buffer.size;
    this.#notePeak();
    if (this.#lazyScheduled) return;
    this.#lazyScheduled = true;
    // The batch's onSubmittedWorkDone is asked for in a microtask: later than
    // each free, so it covers all work submitted before any of them.
    queueMicrotask(() => {
      this.#lazyScheduled = false;
      const batch = this.#lazy.length;
      if (batch === 0) return;
      void this.#workDone().then(() => this.#destroyLazy(batch));
    });
  }

  /**
   * Wait until pending bytes are within budget (or the device is lost).
   * Submits a marker for what is unconfirmed and flushes lazy releases when needed.
   */
  async relieve(): Promise<void> {
    if (!this.overBudget) return;
    this.#waits += 1;
    while (this.overBudget) {
      this.#submitMarker();
      if (this.#unconfirmed > this.#limits.maxPendingBytes || this.#lazyBytes === 0) {
        if (this.#inflight.size === 0) return; // nothing left that could lower the count
        await Promise.race(this.#inflight);
      } else {
        await this.flush();
      }
    }
  }

  /**
   * Flush: wait for the work submitted so far, destroy every lazy release,
   * then wait until the queue has had a marker after those destroys.
   */
  async flush(): Promise<void> {
    if (this.#dead) return;
    const batch = this.#lazy.length;
    await this.#workDone();
    this.#destroyLazy(batch);
    this.#submitMarker();
    await Promise.all([...this.#inflight]);
  }

  /** The device was lost: destroy lazy buffers, forget pending bytes, wake waiters. */
  lose(): void {
    this.#dead = true;
    const lazy = this.#lazy;
    this.#lazy = [];
    this.#lazyBytes = 0;
    this.#unconfirmed = 0;
    this.#epochBytes = 0;
    for (const item of lazy) item.buffer.destroy();
  }

  /** Current numbers. */
  stats(): ThrottleStats {
    return {
      lazyBuffers: this.#lazy.length,
      lazyBytes: this.#lazyBytes,
      unconfirmedBytes: this.#unconfirmed,
      peakPendingBytes: this.#peak,
      destroyed: this.#destroyed,
      markers: this.#markers,
      waits: this.#waits,
    };
  }

  #notePeak(): void {
    const pending = this.#lazyBytes + this.#unconfirmed;
    if (pending > this.#peak) this.#peak = pending;
  }

  /** Destroy the oldest `count` lazy buffers (those of a batch whose work is done). */
  #destroyLazy(count: number): void {
    const batch = this.#lazy.splice(0, Math.min(count, this.#lazy.length));
    for (const item of batch) {
      this.#lazyBytes -= item.bytes;
      this.destroy(item.buffer);
    }
  }

  /** onSubmittedWorkDone that never rejects (a lost device counts as done). */
  #workDone(): Promise<void> {
    const queue = this.#device.queue as Partial<GPUQueue> | undefined;
    if (this.#dead || typeof queue?.onSubmittedWorkDone !== "function") return Promise.resolve();
    return queue.onSubmittedWorkDone().then(
      () => undefined,
      () => undefined,
    );
  }

  /** Submit an empty command buffer so the queue serial advances, and confirm the epoch's bytes when done. */
  #submitMarker(): void {
    const bytes = this.#epochBytes;
    if (bytes === 0 || this.#dead) return;
    this.#epochBytes = 0;
    const device = this.#device as Partial<GPUDevice>;
    const queue = device.queue as Partial<GPUQueue> | undefined;
    if (typeof queue?.submit === "function" && typeof device.createCommandEncoder === "function") {
      try {
        queue.submit([device.createCommandEncoder({ label: "webdlpack destroy marker" }).finish()]);
      } catch {
        /* a lost device refuses; its memory goes with it */
      }
    }
    this.#markers += 1;
    const done: Promise<void> = this.#workDone().then(() => {
      this.#inflight.delete(done);
      if (!this.#dead) this.#unconfirmed -= bytes;
    });
    this.#inflight.add(done);
  }
}

/** Throttle limits merged over `base` (`options.throttleLimits`). Throws INVALID_ARGUMENT naming the field. */
export function mergeThrottleLimits(base: Readonly<ThrottleLimits>, limits: unknown): ThrottleLimits {
  return mergeCountLimits(base, limits, "options.throttleLimits", "throttle limit");
}
