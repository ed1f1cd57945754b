/**
 * The device registry: which GPUDevice each device id names, and device loss.
 *
 * Id 0 is the default device made by `setup()`; ids > 0 are devices the user
 * made and registered (ONNX Runtime Web's convention). Ids are never reused.
 * Each registration is a {@link DeviceRecord}; pointers hold their record, so
 * when device 0 is lost and `setup()` makes a new one, old pointers still see
 * the old, lost record.
 */
import { describeValue } from "../../describe-value.js";
import { reportUncaught, WebDLPackError } from "../../errors.js";

/** Adapter facts kept for a device (a plain copy of GPUAdapterInfo). */
export interface AdapterInfoSummary {
  /** e.g. "google". */
  vendor: string;
  /** e.g. "swiftshader". */
  architecture: string;
  /** Device name, often empty. */
  device: string;
  /** Free-form description, often empty. */
  description: string;
}

/** One registered device. Fields are read by the context; only the registry writes them. */
export interface DeviceRecord {
  /** Device id: 0 default, > 0 registered. */
  readonly id: number;
  /** The WebGPU device. */
  readonly device: GPUDevice;
  /** Adapter facts, when known. */
  readonly adapterInfo: AdapterInfoSummary | null;
  /** True once `device.lost` resolved. */
  lost: boolean;
  /** GPUDeviceLostInfo.reason once lost ("destroyed" or "unknown"). */
  lostReason: string;
  /** GPUDeviceLostInfo.message once lost. */
  lostMessage: string;
  /** False once unregistered or replaced (device 0 after a new setup). */
  current: boolean;
}

/** What an {@link DeviceRegistry.onDeviceLost} listener receives. */
export interface DeviceLostEvent {
  /** The id the device had. */
  deviceId: number;
  /** The lost device. */
  device: GPUDevice;
  /** "destroyed" (someone called destroy()) or "unknown". */
  reason: string;
  /** The browser's message. */
  message: string;
}

/** Listener for device loss. */
export type DeviceLostListener = (event: DeviceLostEvent) => void;

/** Copy the readable fields of a GPUAdapterInfo (or a user-given object). */
export function summarizeAdapterInfo(info: unknown): AdapterInfoSummary | null {
  if (info === null || typeof info !== "object") return null;
  const source = info as Record<string, unknown>;
  const text = (key: string): string => (typeof source[key] === "string" ? (source[key] as string) : "");
  return {
    vendor: text("vendor"),
    architecture: text("architecture"),
    device: text("device"),
    description: text("description"),
  };
}

/** Whether `value` looks like a GPUDevice (duck-typed: works across realms and polyfills). */
export function isGPUDevice(value: unknown): value is GPUDevice {
  if (value === null || typeof value !== "object") return false;
  const d = value as Record<string, unknown>;
  return (
    typeof d["createBuffer"] === "function" &&
    typeof d["pushErrorScope"] === "function" &&
    typeof d["popErrorScope"] === "function" &&
    typeof d["queue"] === "object" &&
    d["queue"] !== null &&
    typeof (d["lost"] as Promise<unknown> | undefined)?.then === "function"
  );
}

/** Message naming a lost device and why. */
export function lostDescription(record: DeviceRecord): string {
  return `GPU device ${record.id} was lost (reason "${record.lostReason}": ${record.lostMessage || "no message"})`;
}

/** Registry of devices by id, with loss tracking and listener fan-out. */
export class DeviceRegistry {
  readonly #records = new Map<number, DeviceRecord>();
  readonly #listeners = new Set<DeviceLostListener>();
  readonly #onLost: ((record: DeviceRecord) => void) | undefined;
  #nextId = 1;

  /** A registry; `onLost` (the context's cleanup) runs for every lost record before the listeners. */
  constructor(onLost?: (record: DeviceRecord) => void) {
    this.#onLost = onLost;
  }

  /** Make `device` the default device (id 0), replacing a previous one. */
  setDefault(device: GPUDevice, adapterInfo: AdapterInfoSummary | null): DeviceRecord {
    const previous = this.#records.get(0);
    if (previous) previous.current = false;
    return this.#add(0, device, adapterInfo);
  }

  /**
   * Register a user-made device; the same device again gives the same id
   * (0 if it is the default device). A lost device is refused (DEVICE_LOST).
   */
  register(device: unknown, adapterInfo: AdapterInfoSummary | null): number {
    if (!isGPUDevice(device)) {
      throw new WebDLPackError("INVALID_ARGUMENT", "registerWebGPUDevice needs a GPUDevice", {
        field: "device",
        value: describeValue(device),
        expected: "a GPUDevice (createBuffer, queue, lost, error scopes)",
      });
    }
    for (const record of this.#records.values()) {
      if (record.device === device) {
        if (record.lost) throw lostError(record, "registerWebGPUDevice");
        return record.id;
      }
    }
    const id = this.#nextId++;
    this.#add(id, device, adapterInfo);
    return id;
  }

  /** Forget device `id` (> 0). Live pointers are the caller's to check first. */
  unregister(id: number): DeviceRecord {
    const record = this.record(id);
    if (id === 0) {
      throw new WebDLPackError("INVALID_ARGUMENT", "device 0 is the default device and can not be unregistered", {
        field: "deviceId",
        value: id,
        expected: "an id > 0 returned by registerWebGPUDevice",
      });
    }
    record.current = false;
    this.#records.delete(id);
    return record;
  }

  /** The current record of `id` (lost or not). Throws UNKNOWN_DEVICE. */
  record(id: unknown): DeviceRecord {
    const record = typeof id === "number" ? this.#records.get(id) : undefined;
    if (record) return record;
    if (id === 0) {
      throw new WebDLPackError("UNKNOWN_DEVICE", "there is no default WebGPU device yet: call setup() first", {
        field: "deviceId",
        value: id,
        expected: "setup() to have finished",
      });
    }
    throw new WebDLPackError("UNKNOWN_DEVICE", `no WebGPU device has id ${String(id)}`, {
      field: "deviceId",
      value: id,
      expected: `0 (after setup()) or an id from registerWebGPUDevice: one of [${[...this.#records.keys()].join(", ")}]`,
    });
  }

  /** The record of `id`, which must not be lost. Throws UNKNOWN_DEVICE / DEVICE_LOST. */
  live(id: unknown, operation: string): DeviceRecord {
    const record = this.record(id);
    if (record.lost) throw lostError(record, operation);
    return record;
  }

  /** Current records, by id. */
  list(): DeviceRecord[] {
    return [...this.#records.values()].sort((a, b) => a.id - b.id);
  }

  /** Call `listener` whenever a registered device is lost. Returns a function that unsubscribes. */
  onDeviceLost(listener: DeviceLostListener): () => void {
    if (typeof listener !== "function") {
      throw new WebDLPackError("INVALID_ARGUMENT", "onDeviceLost needs a function", {
        field: "listener",
        value: describeValue(listener),
        expected: "a function (event) => void",
      });
    }
    // Wrap so the same function subscribed twice is called twice and unsubscribes once each.
    const entry: DeviceLostListener = (event) => listener(event);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  #add(id: number, device: GPUDevice, adapterInfo: AdapterInfoSummary | null): DeviceRecord {
    const record: DeviceRecord = {
      id,
      device,
      adapterInfo,
      lost: false,
      lostReason: "",
      lostMessage: "",
      current: true,
    };
    this.#records.set(id, record);
    device.lost.then(
      (info) => this.#markLost(record, info?.reason ?? "unknown", info?.message ?? ""),
      (err: unknown) => this.#markLost(record, "unknown", String(err)),
    );
    return record;
  }

  #markLost(record: DeviceRecord, reason: string, message: string): void {
    if (record.lost) return;
    record.lost = true;
    record.lostReason = String(reason);
    record.lostMessage = String(message);
    try {
      this.#onLost?.(record);
    } catch (err) {
      reportUncaught(err, "a device-lost listener");
    }
    if (!record.current) return;
    const event: DeviceLostEvent = {
      deviceId: record.id,
      device: record.device,
      reason: record.lostReason,
      message: record.lostMessage,
    };
    for (const listener of [...this.#listeners]) {
      try {
        listener(event);
      } catch (err) {
        reportUncaught(err, "a device-lost listener");
      }
    }
  }
}

/** DEVICE_LOST error for `record` during `operation`. */
export function lostError(record: DeviceRecord, operation: string, ptr?: string): WebDLPackError {
  const target = ptr === undefined ? "" : ` pointer ${ptr} can no longer be used;`;
  const advice = record.id === 0 ? " call setup() again for a new device 0" : " register a new device";
  return new WebDLPackError("DEVICE_LOST", `${operation}: ${lostDescription(record)};${target}${advice}`, {
    field: "deviceId",
    value: record.id,
    expected: "a device that is not lost",
  });
}
