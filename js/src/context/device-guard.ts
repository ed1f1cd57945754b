/**
 * Device guards: how frameworks share one GPUDevice without one of them taking
 * it away from the others by calling `device.destroy()`.
 *
 * `ctx.getWebGPUDevice(id, {owner})` returns a guard: a Proxy of the device
 * whose `destroy()` only drops that owner's reference. The real device is
 * destroyed when the last owner holding a guard releases it (reference
 * counting) — unless the context still has live GPU pointers on it (Python,
 * C or JS tensors allocated through webdlpack): those count as one more
 * reference, so the destroy waits (with one console warning naming who still
 * uses the device) until the last of them is freed, and is called off if an
 * owner acquires a guard again first. Everything else is forwarded to the real device, with methods
 * bound to it (so WebGPU's brand checks see the real device), and the same
 * function object each time (`guard.createBuffer === guard.createBuffer`).
 *
 * Why a guard and not a patched `device.destroy`: a patched method can not
 * tell which framework calls it, so a framework calling destroy() twice would
 * drop another's reference; the guard knows its owner. The cost: a guard is
 * not the native object, so APIs that take a device *argument* and check its
 * brand (`canvasContext.configure({device})`) need the real device:
 * `unwrapDevice(guard)` or `ctx.getWebGPUDevice(id)` without an owner.
 */

/** Key under which a guard answers with its real device (shared by every copy of webdlpack). */
export const DEVICE_GUARD_TARGET: symbol = Symbol.for("webdlpack.deviceGuard.target");

/** The real device behind `device` if it is a guard, else `device` itself. */
export function unwrapDevice<T>(device: T): T {
  if (device !== null && typeof device === "object") {
    const target = (device as Record<symbol, unknown>)[DEVICE_GUARD_TARGET];
    if (target !== undefined) return target as T;
  }
  return device;
}

/** One owner's hold on a device. */
interface Hold {
  guard: GPUDevice;
  released: boolean;
}

/** What the context tells the guards about its own use of the device. */
export interface ContextUse {
  /** Live GPU pointers the context has on this device. */
  livePointers(): number;
  /** Owners of those pointers, for the warning. */
  pointerOwners(): string[];
}

const NOT_USED: ContextUse = { livePointers: () => 0, pointerOwners: () => [] };

/** The guards of one device. */
export class DeviceGuards {
  readonly #device: GPUDevice;
  readonly #holds = new Map<string, Hold>();
  readonly #use: ContextUse;
  #destroyPending = false;

  /** Guards for `device`; `use` reports the context's own live pointers on it. */
  constructor(device: GPUDevice, use: ContextUse = NOT_USED) {
    this.#device = device;
    this.#use = use;
  }

  /**
   * True when every guard owner released the device but the context's live
   * pointers keep it alive: the device is destroyed when the last is freed.
   */
  get destroyPending(): boolean {
    return this.#destroyPending;
  }

  /** Owners currently holding the device, in the order they got it. */
  get owners(): string[] {
    return [...this.#holds.entries()].filter(([, h]) => !h.released).map(([o]) => o);
  }

  /** The guard of `owner` (the same object while the owner holds it; a new one after it released). */
  acquire(owner: string): GPUDevice {
    const held = this.#holds.get(owner);
    if (held !== undefined && !held.released) return held.guard;
    this.#destroyPending = false; // an owner holds it again: the pending destroy is called off
    const hold: Hold = { guard: undefined as unknown as GPUDevice, released: false };
    hold.guard = this.#makeGuard(owner, hold);
    this.#holds.delete(owner); // keep insertion order = acquisition order
    this.#holds.set(owner, hold);
    return hold.guard;
  }

  /**
   * Drop `owner`'s reference. Destroys the real device when it was the last one
   * and the context has no live pointers on it; with live pointers the destroy
   * is pending (see {@link DeviceGuards.pointerFreed}). Returns true if the
   * device was destroyed. A second release is a no-op.
   */
  release(owner: string): boolean {
    const hold = this.#holds.get(owner);
    if (hold === undefined || hold.released) return false;
    hold.released = true;
    if (this.owners.length > 0) return false;
    const live = this.#use.livePointers();
    if (live > 0) {
      this.#destroyPending = true;
      console.warn(`webdlpack: "${owner}" destroyed its guard of the shared GPUDevice, the last framework holding it; ` +
        `the device stays alive for ${live} live GPU pointer(s) of ${this.#use.pointerOwners().join(", ")} and is ` +
        "destroyed when the last of them is freed");
      return false;
    }
    this.#device.destroy();
    return true;
  }

  /** The context freed a pointer on this device: finish a pending destroy once none is left. Returns true if destroyed. */
  pointerFreed(): boolean {
    if (!this.#destroyPending || this.#use.livePointers() > 0) return false;
    this.#destroyPending = false;
    this.#device.destroy();
    return true;
  }

  #makeGuard(owner: string, hold: Hold): GPUDevice {
    const device = this.#device;
    const bound = new Map<PropertyKey, unknown>();
    const destroy = (): void => {
      if (this.#holds.get(owner) === hold) this.release(owner);
    };
    return new Proxy(device, {
      get(target, prop) {
        if (prop === "destroy") return destroy;
        if (prop === DEVICE_GUARD_TARGET) return target;
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        let fn = bound.get(prop);
        if (fn === undefined || (fn as { original?: unknown }).original !== value) {
          const wrapper = (value as (...args: unknown[]) => unknown).bind(target) as ((...args: unknown[]) => unknown) & { original?: unknown };
          wrapper.original = value;
          fn = wrapper;
          bound.set(prop, fn);
        }
        return fn;
      },
      set(target, prop, value) {
        return Reflect.set(target, prop, value, target);
      },
    });
  }
}
