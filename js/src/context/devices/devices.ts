/**
 * The devices room's calls (`setup`, `getWebGPUDevice`, `registerWebGPUDevice`,
 * `unregisterWebGPUDevice`, `onDeviceLost`): the device registry, device 0's
 * setup and the per-owner guards of one context. What the other rooms do when
 * a device arrives, is forgotten or is lost comes in as {@link DeviceHooks}
 * (context/rooms.ts wires them).
 */
import { checkOptions } from "../../arguments.js";
import { WebDLPackError } from "../../errors.js";
import { DEVICE_OPTION_RULES } from "../options.js";
import { DefaultDeviceSetup } from "./default-device.js";
import { DeviceGuards, unwrapDevice } from "./guard.js";
import {
  DeviceRegistry,
  summarizeAdapterInfo,
  type AdapterInfoSummary,
  type DeviceLostListener,
  type DeviceRecord,
} from "./registry.js";
import type { DeviceInfo, SetupConfig } from "./setup.js";

/** Options of {@link WebDLPackContext.getWebGPUDevice}. */
export interface DeviceOptions {
  /** Framework name: returns that owner's guard, whose destroy() only drops its reference. */
  owner?: string;
}

/** What the other rooms do as devices come and go (context/rooms.ts). */
export interface DeviceHooks {
  /** Before device 0 is made: settle what must precede the first pointer (the pointer tag). */
  beforeSetup(): Promise<void>;
  /** A new device 0 is registered, made with `config`. */
  installed(record: DeviceRecord, config: SetupConfig): void;
  /** Setup resolves after this (the device's transfers measured, their staging ready). */
  prepare(device: GPUDevice, adapterInfo: AdapterInfoSummary | null): Promise<void>;
  /** A device the page made was registered (again: a no-op for the rooms that know it). */
  registered(record: DeviceRecord): void;
  /** Live GPU pointers on `record` (unregistering needs none). */
  livePointersOn(record: DeviceRecord): number;
  /** `record` was unregistered. */
  forgotten(record: DeviceRecord): void;
  /** `record` was lost (before the page's listeners hear it). */
  lost(record: DeviceRecord): void;
}

/** The devices of one context. */
export class Devices {
  readonly registry: DeviceRegistry;
  readonly #guards = new Map<DeviceRecord, DeviceGuards>();
  readonly #hooks: DeviceHooks;
  readonly #setup: DefaultDeviceSetup;

  constructor(hooks: DeviceHooks) {
    this.#hooks = hooks;
    this.registry = new DeviceRegistry((record) => {
      hooks.lost(record);
      this.#guards.delete(record);
    });
    this.#setup = new DefaultDeviceSetup((device, adapterInfo, config) => {
      const record = this.registry.setDefault(device, adapterInfo);
      hooks.installed(record, config);
      return record;
    }, hooks.prepare);
  }

  /** The guards of each device (for stats). */
  get guards(): ReadonlyMap<DeviceRecord, DeviceGuards> {
    return this.#guards;
  }

  /** `ctx.setup(cfg)`. */
  setup(cfg?: SetupConfig): Promise<DeviceInfo> {
    return this.#hooks.beforeSetup().then(() => this.#setup.run(cfg));
  }

  /** `ctx.getWebGPUDevice(id, options)`: the device, or `options.owner`'s guard of it. */
  getWebGPUDevice(id = 0, options?: DeviceOptions): GPUDevice {
    const record = this.registry.live(id, "getWebGPUDevice");
    if (options === undefined) return record.device;
    const opts = checkOptions(options, "getWebGPUDevice", DEVICE_OPTION_RULES);
    if (opts.owner === undefined) return record.device;
    let guards = this.#guards.get(record);
    if (guards === undefined) {
      guards = new DeviceGuards(record.device);
      this.#guards.set(record, guards);
    }
    return guards.acquire(opts.owner);
  }

  /** `ctx.registerWebGPUDevice(device, adapterInfo)`. */
  registerWebGPUDevice(device: GPUDevice, adapterInfo?: GPUAdapterInfo | object): number {
    const real = unwrapDevice(device);
    const info =
      summarizeAdapterInfo((real as { adapterInfo?: unknown } | null)?.adapterInfo) ??
      summarizeAdapterInfo(adapterInfo);
    const id = this.registry.register(real, info);
    this.#hooks.registered(this.registry.record(id));
    return id;
  }

  /** `ctx.unregisterWebGPUDevice(id)`: refused while pointers on it are live. */
  unregisterWebGPUDevice(id: number): void {
    const record = this.registry.record(id);
    const live = this.#hooks.livePointersOn(record);
    if (live > 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", `device ${id} still has ${live} live GPU pointer(s)`, {
        field: "deviceId",
        value: id,
        expected: "a device whose pointers were all freed with freeWebGPU",
      });
    }
    this.registry.unregister(id);
    this.#hooks.forgotten(record);
    this.#guards.delete(record);
  }

  /** `ctx.onDeviceLost(listener)`. */
  onDeviceLost(listener: DeviceLostListener): () => void {
    return this.registry.onDeviceLost(listener);
  }
}
