/**
 * `ctx.stats()`: one snapshot of the context — a row per device (pointers,
 * bytes, cache, throttle, staging, guards), a row per owner and device, and
 * the page totals.
 */
import type { DeviceRecord } from "./devices/registry.js";
import type { Rooms } from "./rooms.js";
import { existingTransfers } from "./transfers/index.js";
import type { ContextStats, DeviceStats, OwnerStats } from "./types.js";

/** The context's stats now, read from its rooms. */
export function collectStats(rooms: Rooms): ContextStats {
  const allocators = rooms.allocation.allocators;
  const src = {
    devices: rooms.devices.registry.list(),
    allocators: allocators.byDevice,
    guards: rooms.devices.guards,
    modeOf: (record: DeviceRecord) => allocators.modeOf(record.id),
    table: rooms.pointers,
    ledger: rooms.ledger,
  };
  const rows = new Map<DeviceRecord, DeviceStats>();
  const row = (record: DeviceRecord): DeviceStats => {
    let r = rows.get(record);
    if (!r) {
      const a = src.allocators.get(record);
      const t = a?.throttle.stats();
      r = {
        deviceId: record.id,
        lost: record.lost,
        current: record.current,
        livePointers: 0,
        liveBytes: 0,
        requestedBytes: 0,
        cacheMode: a?.mode ?? src.modeOf(record),
        cachedBuffers: a?.cache.buffers ?? 0,
        cachedBytes: a?.cache.bytes ?? 0,
        hits: a?.hits ?? 0,
        misses: a?.misses ?? 0,
        lazyReleaseBuffers: t?.lazyBuffers ?? 0,
        lazyReleaseBytes: t?.lazyBytes ?? 0,
        pendingDestroyBytes: t?.unconfirmedBytes ?? 0,
        peakPendingBytes: t?.peakPendingBytes ?? 0,
        destroyed: t?.destroyed ?? 0,
        destroyMarkers: t?.markers ?? 0,
        throttleWaits: t?.waits ?? 0,
        stagingBuffers: existingTransfers(record.device)?.keptBuffers ?? 0,
        guardOwners: src.guards.get(record)?.owners ?? [],
      };
      rows.set(record, r);
    }
    return r;
  };
  for (const record of src.devices) row(record);
  const owners = new Map<string, OwnerStats>();
  const ownerRow = (owner: string, deviceId: number): OwnerStats => {
    const key = `${deviceId}\u0000${owner}`;
    let r = owners.get(key);
    if (!r) {
      r = { owner, deviceId, livePointers: 0, liveBytes: 0, hits: 0, misses: 0 };
      owners.set(key, r);
    }
    return r;
  };
  for (const [record, allocator] of src.allocators) {
    for (const [owner, counts] of allocator.counts) {
      const r = ownerRow(owner, record.id);
      r.hits += counts.hits;
      r.misses += counts.misses;
    }
  }
  let livePointers = 0;
  let liveBytes = 0;
  src.table.forEach((entry) => {
    const r = row(entry.device);
    r.livePointers += 1;
    r.liveBytes += entry.buffer.size;
    r.requestedBytes += entry.requestedSize;
    const o = ownerRow(entry.ownerLabel, entry.device.id);
    o.livePointers += 1;
    o.liveBytes += entry.buffer.size;
    livePointers += 1;
    liveBytes += entry.buffer.size;
  });
  const devices = [...rows.values()].sort((a, b) => a.deviceId - b.deviceId || Number(b.current) - Number(a.current));
  const sum = (key: "cachedBuffers" | "cachedBytes" | "hits" | "misses"): number =>
    devices.reduce((n, d) => n + d[key], 0);
  return {
    devices,
    livePointers,
    liveBytes,
    retiredSlots: src.table.retiredSlots,
    pointerTag: src.table.tag,
    cachedBuffers: sum("cachedBuffers"),
    cachedBytes: sum("cachedBytes"),
    hits: sum("hits"),
    misses: sum("misses"),
    owners: [...owners.values()].sort(
      (a, b) => a.deviceId - b.deviceId || (a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0),
    ),
    ledgerEntries: src.ledger.size,
    leaks: src.ledger.leaks().length,
  };
}
