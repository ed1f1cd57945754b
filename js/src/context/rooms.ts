/**
 * The rooms of one context, made and wired together once: devices, pointers,
 * allocation, transfers, ledger and memory. Each public method of
 * {@link PageContext} is one call into one of them; what crosses rooms — a new
 * device 0, a device registered, forgotten or lost — is said here, once.
 */
import { Allocators } from "./allocation/allocators.js";
import { PointerAllocations } from "./pointers/pointer-allocations.js";
import { Devices } from "./devices/devices.js";
import { Ledger } from "./ledger/ledger.js";
import type { DeviceRecord } from "./devices/registry.js";
import { ContextMemory, type OwnCaches } from "./memory/context-memory.js";
import { BufferTable } from "./pointers/buffer-table.js";
import type { PointerTableOptions } from "./pointers/pointer-format.js";
import { ContextTransfers } from "./transfers/context-calls.js";
import { existingTransfers, releaseTransfers, transfersFor } from "./transfers/index.js";

/** One context's rooms. */
export interface Rooms {
  readonly devices: Devices;
  readonly pointers: BufferTable;
  readonly allocation: PointerAllocations;
  readonly transfers: ContextTransfers;
  readonly ledger: Ledger;
  readonly memory: ContextMemory;
}

/** Make the rooms of a context whose pointer table takes `table` options (tests only). */
export function makeRooms(table?: PointerTableOptions): Rooms {
  const ledger = new Ledger();
  const allocators = new Allocators();
  const memory = new ContextMemory((deviceId) => devices.registry.record(deviceId).device);
  const devices: Devices = new Devices({
    // The pointer tag is settled before device 0 (and so the first pointer) exists.
    beforeSetup: () => pointers.claimUniqueTag(),
    installed(record, config) {
      if (config.cacheMode !== undefined) allocators.setDeviceMode(0, config.cacheMode);
      if (config.memoryBudget !== undefined) memory.setBudget(0, config.memoryBudget);
      if (config.memoryAccounting !== false) memory.attach(0, record.device, ownCachesOf(allocators, record));
      else memory.detach(record.device);
    },
    // setup() resolves once the transfers are measured on the device, their staging is ready (calibrate.ts) and
    // a small upload and readback ran once (warmUp: the page's first transfer then costs what a later one does).
    prepare: (device, adapterInfo) => {
      const t = transfersFor(device, adapterInfo);
      const record = devices.registry.record(0); // device 0, just installed
      // A lost device: its transfers report it.
      const warmUp = () => (record.device === device ? transfers.warmUp(t, record).catch(() => undefined) : undefined);
      return t.calibrate().then(warmUp);
    },
    registered: (record) => memory.attach(record.id, record.device, ownCachesOf(allocators, record)),
    livePointersOn: (record) => pointers.livePointersOn(record),
    forgotten(record) {
      allocators.forget(record)?.drain();
      memory.detach(record.device);
      releaseTransfers(record.device);
    },
    /**
     * Device loss: release every ledger entry of the device (tensors first, so their own release code runs),
     * then the table's buffers on it, keeping their pointers so they keep failing with DEVICE_LOST until
     * freed; drop the cache, the memory count and the staging buffers (the devices room drops the guards).
     */
    lost(record) {
      if (record.current) ledger.releaseDevice(record.id, (e) => pointers.isOwnEntry(e));
      pointers.loseDevice(record);
      allocators.forget(record)?.lose();
      memory.lose(record.device);
      transfersFor(record.device, record.adapterInfo).lose(record.lostReason);
    },
  });
  const pointers = new BufferTable(ledger, allocators, devices.registry, table);
  const allocation = new PointerAllocations(devices.registry, allocators, pointers, memory);
  const transfers = new ContextTransfers(pointers, devices.registry);
  return { devices, pointers, allocation, transfers, ledger, memory };
}

/** webdlpack's caches on `record`'s device: the bucket cache, lazy releases and kept staging buffers. */
export function ownCachesOf(allocators: Allocators, record: DeviceRecord): OwnCaches {
  return {
    trim(): void {
      allocators.existing(record)?.drain();
      existingTransfers(record.device)?.trim();
    },
    cachedBytes(): number {
      const a = allocators.existing(record);
      return (
        (a?.cache.bytes ?? 0) +
        (a?.throttle.stats().lazyBytes ?? 0) +
        (existingTransfers(record.device)?.keptBytes ?? 0)
      );
    },
  };
}
