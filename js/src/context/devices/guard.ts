/**
 * Device guards: how frameworks share one GPUDevice without one of them taking
 * it away from the others by calling `device.destroy()`.
 *
 * `ctx.getWebGPUDevice(id, {owner})` returns a guard: a Proxy of the device
 * whose `destroy()` only drops that owner's hold and says so (one console
 * warning); it never destroys the real device. The device belongs to the
 * context (it made it in `setup()`, or the page registered it): webdlpack's own
 * users — Python, C, JS tensors, the other frameworks — keep using it, and a
 * framework that asks for it again gets a new guard. To really destroy a
 * device, destroy the raw one (`ctx.getWebGPUDevice(id)` without an owner, or
 * `unwrapDevice(guard)`); every `onDeviceLost` listener then hears it.
 * Everything else is forwarded to the real device, with methods bound to it
 * (so WebGPU's brand checks see the real device), and the same function
 * object each time (`guard.createBuffer === guard.createBuffer`).
 *
 * Why a guard and not a patched `device.destroy`: a patched method can not
 * tell which framework calls it; the guard knows its owner, so stats and the
 * warning can name it. The cost: a guard is not the native object, so APIs
 * that take a device *argument* and check its brand
 * (`canvasContext.configure({device})`) need the real device:
 * `unwrapDevice(guard)` or `ctx.getWebGPUDevice(id)` without an owner.
 */
import { createBufferFor } from "../ground/meter.js";

import { Once } from "../../release.js";

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

/**
 * Per real device: the owners whose guarded `createBuffer` is running now, each with its depth. A framework
 * allocates in the middle of its own work (TF.js acquires an op's output and uniform buffers with its compute pass
 * open and the op half recorded), and whatever webdlpack runs meanwhile (memory pressure handlers, code they call)
 * must not make that framework submit: see {@link inOwnCall}.
 */
const inCall = new WeakMap<GPUDevice, Map<string, number>>();

/** True while `owner`'s guarded `createBuffer` on `device` (the real one) is running: that framework is mid-op. */
export function inOwnCall(device: GPUDevice, owner: string): boolean {
  return (inCall.get(device)?.get(owner) ?? 0) > 0;
}

/** The owners in a guarded call into `device` (made on first use). */
function callsInto(device: GPUDevice): Map<string, number> {
  let calls = inCall.get(device);
  if (calls === undefined) {
    calls = new Map();
    inCall.set(device, calls);
  }
  return calls;
}

/** One owner's hold on a device: its guard, and its release (a {@link Once}: the warning, said once). */
interface Hold {
  guard: GPUDevice;
  release: Once;
}

/** The guards of one device. */
export class DeviceGuards {
  readonly #device: GPUDevice;
  readonly #holds = new Map<string, Hold>();

  /** Guards for `device`. */
  constructor(device: GPUDevice) {
    this.#device = device;
  }

  /** Owners currently holding the device, in the order they got it. */
  get owners(): string[] {
    return [...this.#holds.entries()].filter(([, h]) => !h.release.released).map(([o]) => o);
  }

  /** The guard of `owner` (the same object while the owner holds it; a new one after it released). */
  acquire(owner: string): GPUDevice {
    const held = this.#holds.get(owner);
    if (held !== undefined && !held.release.released) return held.guard;
    const hold: Hold = { guard: undefined as unknown as GPUDevice, release: new Once(() => this.#warn(owner)) };
    hold.guard = this.#makeGuard(owner, hold);
    this.#holds.delete(owner); // keep insertion order = acquisition order
    this.#holds.set(owner, hold);
    return hold.guard;
  }

  /**
   * Drop `owner`'s hold (what its guard's `destroy()` does). The real device is
   * never destroyed here; a console warning says so and how to destroy it.
   * Returns false when `owner` held nothing (a second drop is a no-op).
   */
  drop(owner: string): boolean {
    return this.#holds.get(owner)?.release.release() ?? false;
  }

  /** The warning a guard's `destroy()` gives (the device stays). */
  #warn(owner: string): void {
    const others = this.owners;
    console.warn(
      `webdlpack: "${owner}" called destroy() on its guard of the shared GPUDevice: only its hold was dropped. ` +
        `The device stays with webdlpack's context (other frameworks: ${others.length > 0 ? others.join(", ") : "none"}; ` +
        "webdlpack's own tensors and pointers keep working). To really destroy it, destroy the raw device: " +
        "ctx.getWebGPUDevice(id).destroy().",
    );
  }

  #makeGuard(owner: string, hold: Hold): GPUDevice {
    const device = this.#device;
    const bound = new Map<PropertyKey, unknown>();
    const destroy = (): void => {
      if (this.#holds.get(owner) === hold) this.drop(owner);
    };
    // Buffers the framework creates count as its own in the context's memory room (never refused by a throw), and
    // while it creates one it is inside its own work (inOwnCall).
    const calls = callsInto(device);
    const createBuffer = (descriptor: GPUBufferDescriptor): GPUBuffer => {
      calls.set(owner, (calls.get(owner) ?? 0) + 1);
      try {
        return createBufferFor(device, descriptor, owner);
      } finally {
        const depth = calls.get(owner)! - 1;
        if (depth === 0) calls.delete(owner);
        else calls.set(owner, depth);
      }
    };
    return new Proxy(device, {
      get(target, prop) {
        if (prop === "destroy") return destroy;
        if (prop === "createBuffer") return createBuffer;
        if (prop === DEVICE_GUARD_TARGET) return target;
        const value: unknown = Reflect.get(target, prop, target);
        if (typeof value !== "function") return value;
        let fn = bound.get(prop);
        if (fn === undefined || (fn as { original?: unknown }).original !== value) {
          const wrapper = (value as (...args: unknown[]) => unknown).bind(target) as ((
            ...args: unknown[]
          ) => unknown) & { original?: unknown };
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
