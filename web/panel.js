// The live allocation panel: what the page-wide context holds right now, read
// from its lifetime ledger (`ctx.ledger.entries()`), its allocator statistics
// (`ctx.stats()`, `ctx.getCacheMode()`), the GPU memory of device 0 by owner
// (`ctx.memory()`: webdlpack, each framework, the page) and the safety net's leak reports
// (`ctx.leaks()`). Refreshed on a timer and after every exchange step. Drawing
// needs the page's DOM; the snapshot does not (the demo's worker takes it too).

const hex = (n) => (n === null || n === undefined ? "—" : `0x${(n >>> 0).toString(16)}`);
const dev = (id) => (id === null || id === undefined ? "cpu" : `webgpu:${id}`);
const escapeHtml = (s) =>
  String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
const age = (ms) => (ms < 1000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(1)} s`);

/** Rows of a table body, or one row saying `empty` when there are none. */
function rows(items, columns, empty, render) {
  if (items.length === 0) return `<tr class="empty"><td colspan="${columns}">${empty}</td></tr>`;
  return items
    .map(
      (item) =>
        `<tr>${render(item)
          .map((c) => `<td>${escapeHtml(c)}</td>`)
          .join("")}</tr>`,
    )
    .join("");
}

/** A snapshot of what the panel shows (also returned to scripts/demo.mjs and the test). */
export function panelSnapshot(ctx) {
  const stats = ctx.stats();
  const d0 = stats.devices.find((d) => d.deviceId === 0 && d.current) ?? stats.devices[0];
  return {
    cacheMode: ctx.getCacheMode(0),
    device: d0 && {
      livePointers: d0.livePointers,
      liveBytes: d0.liveBytes,
      cachedBuffers: d0.cachedBuffers,
      cachedBytes: d0.cachedBytes,
      hits: d0.hits,
      misses: d0.misses,
      pendingDestroyBytes: d0.pendingDestroyBytes,
      destroyed: d0.destroyed,
      guardOwners: d0.guardOwners,
    },
    owners: stats.owners,
    memory: memorySnapshot(ctx),
    entries: ctx.ledger.entries().map(({ id, kind, owner, deviceId, bytes, pointer, ageMs }) => ({
      id,
      kind,
      owner,
      deviceId,
      bytes,
      pointer,
      ageMs,
    })),
    leaks: ctx.leaks().map(({ id, kind, owner, deviceId, bytes, pointer, ageMs, where }) => ({
      id,
      kind,
      owner,
      deviceId,
      bytes,
      pointer,
      ageMs,
      where,
    })),
  };
}

/** `ctx.memory()` of device 0 as plain data (null on a context without it: protocol < 1.3). */
function memorySnapshot(ctx) {
  if (typeof ctx.memory !== "function") return null;
  const m = ctx.memory(0);
  return {
    budget: m.budget,
    totalBytes: m.totalBytes,
    totalBuffers: m.totalBuffers,
    peakBytes: m.peakBytes,
    pressureEvents: m.pressureEvents,
    owners: m.owners.map(({ owner, bytes, buffers, cachedBytes, liveBytes, peakBytes }) => ({
      owner,
      bytes,
      buffers,
      cachedBytes,
      liveBytes,
      peakBytes,
    })),
  };
}

/** Draw `snap` into the panel's elements. */
function render(snap) {
  const d = snap.device ?? {};
  document.querySelector("#cache-mode").textContent = snap.cacheMode;
  document.querySelector("#cache-stats").innerHTML = [
    ["live pointers", d.livePointers],
    ["live bytes", d.liveBytes],
    ["cached buffers", d.cachedBuffers],
    ["cached bytes", d.cachedBytes],
    ["cache hits", d.hits],
    ["cache misses", d.misses],
    ["destroyed", d.destroyed],
    ["pending destroy bytes", d.pendingDestroyBytes],
    ["device guard owners", (d.guardOwners ?? []).join(", ") || "none"],
  ]
    .map(([k, v]) => `<div data-stat="${k}"><span>${k}</span> <b>${escapeHtml(v ?? "—")}</b></div>`)
    .join("");
  const m = snap.memory;
  document.querySelector("#memory-total").textContent = m
    ? `${m.totalBytes} B in ${m.totalBuffers} buffers (peak ${m.peakBytes} B); budget ${m.budget ?? "none"}; ` +
      `room made ${m.pressureEvents} times`
    : "not counted by this context";
  const unknown = (v) => (v === null ? "?" : v);
  document.querySelector("#memory tbody").innerHTML = rows(m?.owners ?? [], 6, "no GPU buffers", (o) => [
    o.owner,
    o.bytes,
    o.buffers,
    unknown(o.cachedBytes),
    unknown(o.liveBytes),
    o.peakBytes,
  ]);
  document.querySelector("#owners tbody").innerHTML = rows(snap.owners, 6, "no allocations yet", (o) => [
    o.owner,
    dev(o.deviceId),
    o.livePointers,
    o.liveBytes,
    o.hits,
    o.misses,
  ]);
  document.querySelector("#ledger tbody").innerHTML = rows(snap.entries, 7, "nothing alive", (e) => [
    e.id,
    e.kind,
    hex(e.pointer),
    dev(e.deviceId),
    e.owner,
    e.bytes,
    age(e.ageMs),
  ]);
  document.querySelector("#leaks tbody").innerHTML = rows(snap.leaks, 7, "no leaks reported", (l) => [
    l.id,
    l.kind,
    hex(l.pointer),
    dev(l.deviceId),
    l.owner,
    l.bytes,
    age(l.ageMs),
  ]);
}

/**
 * Show the panel and redraw it every `intervalMs` from `snapshot()` — a snapshot, or a promise of one (in worker
 * mode the worker's context answers). Returns `refresh()`: redraw now, resolving to the snapshot drawn.
 */
export function startPanel(snapshot, intervalMs = 250) {
  document.querySelector("#allocations").hidden = false;
  const refresh = async () => {
    const snap = await snapshot();
    render(snap);
    return snap;
  };
  refresh();
  setInterval(refresh, intervalMs);
  return refresh;
}

/**
 * Show the safety net at work: allocate a GPU buffer, give it a holder in the
 * ledger (`ctx.ledger.track`, as a tensor over it has) whose release frees the
 * pointer, tie that holder to a JS object (`ctx.ledger.watch`), and drop the
 * object without releasing anything. When the garbage collector takes the
 * object, the ledger releases the holder — the buffer is freed — and reports
 * the leak (ctx.leaks()). Returns the pointer (alive until then).
 */
export async function leakOne(ctx) {
  const owner = "demo (leaked on purpose)";
  const bytes = 4096;
  const ptr = await ctx.allocWebGPUChecked(bytes, { owner });
  const holder = ctx.ledger.track({
    kind: "tensor",
    owner,
    deviceId: 0,
    bytes,
    pointer: ptr,
    release: () => ctx.freeWebGPU(ptr),
  });
  ctx.ledger.watch({ what: "a tensor the page forgot to dispose" }, holder);
  return ptr;
}
