/**
 * One {@link DeviceTransfers} per GPUDevice, found from the device itself, so
 * every layer reaches the same staging rings and loss bookkeeping for a device
 * — the context's methods, Python's bridge and the adapters (which may hold a
 * device from another library copy's context) alike.
 */
import { summarizeAdapterInfo } from "../devices/registry.js";
import { DeviceTransfers, planFor } from "./device-transfers.js";

const byDevice = new WeakMap<GPUDevice, DeviceTransfers>();

/** The transfers of `device`, made on first use with the plan for its adapter (`device.adapterInfo` where present). */
export function transfersFor(device: GPUDevice, adapterInfo?: unknown): DeviceTransfers {
  let t = byDevice.get(device);
  if (t === undefined) {
    const info =
      summarizeAdapterInfo((device as { adapterInfo?: unknown }).adapterInfo) ?? summarizeAdapterInfo(adapterInfo);
    t = new DeviceTransfers(
      device,
      device.label ? `GPU device "${device.label}"` : "the GPU device",
      (b) => b.destroy(),
      planFor(info),
      info === null ? null : JSON.stringify(info),
    );
    byDevice.set(device, t);
  }
  return t;
}

/** The transfers of `device` if it has any yet (for stats: looking must not make them). */
export function existingTransfers(device: GPUDevice): DeviceTransfers | undefined {
  return byDevice.get(device);
}

/** Drop `device`'s transfers (it is no longer used): kept staging is destroyed. */
export function releaseTransfers(device: GPUDevice): void {
  byDevice.get(device)?.drain();
  byDevice.delete(device);
}
