#!/usr/bin/env node
/**
 * Which staging buffer a small transfer lands on, as applications call (Node + dawn.node; issue 33): one long-lived
 * device, rounds of sizes in a seeded shuffled order (small ones between large ones, as bench/gpu/app.js's long
 * phase), and with `--idle-ms` the queue drained and a timer before each small call (its idle phase). Each small
 * `ctx.readbackInto` (and `ctx.upload` + wait) is classed by the staging buffer the ring handed out:
 *
 *   same    the buffer(s) the previous call of that size took (as a hand-written readback reuses its one buffer every
 *           call: its mapping is the one just used)
 *   other   a kept buffer the previous call of the size did not take (a large transfer between took it, or the
 *           ring chose another)
 *   new     a buffer made for the call
 *   none    no staging taken (an upload that went through writeBuffer)
 *
 * and timed against the hand-written readback into a reused array (one kept MAP_READ buffer per size; uploads:
 * writeBuffer + wait) in the same rounds, interleaved in rotating order — and against the same readback through two
 * kept buffers in turn ("raw, 2 buffers in turn": never the buffer just used), what landing on a colder buffer
 * costs by itself; and through a 64 KiB buffer (the class setup keeps, which serves the ring's smaller readbacks),
 * what a larger staging buffer costs. `DeviceTransfers.read` (readOne, below the pointer lookup) splits the rest. Medians µs per size and class; if the
 * "other"/"new" classes are rare or no slower than "same", the ring's choice of buffer is not where small transfers
 * lose time.
 *
 *   node bench/gpu/staging-reuse.mjs [--small 1024,16384,262144,1048576] [--large 16777216,67108864] [--rounds 60]
 *     [--idle-ms 5] [--out FILE.json]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { seeded, shuffled } from "./suite.js";

const { values: args } = parseArgs({
  options: {
    small: { type: "string", default: "1024,16384,262144,1048576" },
    large: { type: "string", default: "16777216,67108864" },
    rounds: { type: "string", default: "60" },
    "idle-ms": { type: "string", default: "5" },
    out: { type: "string" },
  },
});

const { create, globals } = await import("webgpu");
Object.assign(globalThis, globals);
const webdlpack = await import("../../js/dist/index.js");
const { transfersFor } = await import("../../js/dist/context/transfers/index.js");
const { ReadRing, WriteRing } = await import("../../js/dist/context/transfers/staging.js");

// Record the buffers a ring hands out during a call (a readback split into pieces takes several).
const taken = { read: [], write: [] };
const made = { read: 0, write: 0 };
for (const [kind, Cls] of [
  ["read", ReadRing],
  ["write", WriteRing],
]) {
  const take = Cls.prototype.take;
  Cls.prototype.take = function (bytes) {
    const before = this.created;
    const buffer = take.call(this, bytes);
    made[kind] += this.created - before;
    taken[kind].push(buffer);
    return buffer;
  };
}
/** The buffers the last call at each (kind, size) took. */
const lastTaken = new Map();
/** Class of a call's staging: new (any made), same (all among the previous call's at the size), other, none. */
function classOf(kind, n) {
  const key = `${kind} ${n}`;
  const now = taken[kind];
  const before = lastTaken.get(key) ?? [];
  lastTaken.set(key, now);
  if (made[kind] > 0) return "new";
  if (now.length === 0) return "none";
  return now.every((b) => before.includes(b)) ? "same" : "other";
}

const gpu = create([]);
const ctx = webdlpack.getContext();
await ctx.setup({ gpu });
const device = ctx.getWebGPUDevice(0);
const info = (await gpu.requestAdapter())?.info;
const { MAP_READ, COPY_SRC, COPY_DST, STORAGE } = GPUBufferUsage;
const small = args.small.split(",").map(Number);
const large = args.large.split(",").filter(Boolean).map(Number);
const idleMs = Number(args["idle-ms"]);
const rounds = Number(args.rounds);

/** Per size: the source pointer/buffer, a reused array, a kept staging buffer for the hand-written readback. */
async function sizeEnv(n) {
  const ptr = await ctx.allocWebGPUChecked(n, { usage: STORAGE | COPY_SRC | COPY_DST });
  const buffer = ctx.gpuPointerToBuffer(ptr);
  device.queue.writeBuffer(buffer, 0, new Uint8Array(n).fill(7));
  const staging = device.createBuffer({ size: n, usage: MAP_READ | COPY_DST });
  const big = device.createBuffer({ size: Math.max(n, 65536), usage: MAP_READ | COPY_DST });
  const pair = [0, 1].map(() => device.createBuffer({ size: n, usage: MAP_READ | COPY_DST }));
  return { n, ptr, buffer, staging, big, pair, turn: 0, out: new Uint8Array(n), host: new Uint8Array(n).fill(9) };
}
const envs = new Map();
for (const n of [...small, ...large]) envs.set(n, await sizeEnv(n));

/** The hand-written readback of `e` through `staging`. */
async function readThrough(e, staging) {
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(e.buffer, 0, staging, 0, e.n);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(GPUMapMode.READ, 0, e.n);
  e.out.set(new Uint8Array(staging.getMappedRange(0, e.n)));
  staging.unmap();
}

const calls = {
  raw: (e) => readThrough(e, e.staging),
  // Never the buffer just used: what a ring that always handed out another (colder) buffer would cost.
  "raw, 2 buffers in turn": (e) => readThrough(e, e.pair[e.turn++ % 2]),
  // The class setup keeps (64 KiB) serving a smaller readback, as the ring's 1 KiB readbacks are served.
  "raw, 64 KiB staging": (e) => readThrough(e, e.big),
  "DeviceTransfers.read": (e) => transfersFor(device).read(e.buffer, 0, e.n, (b, at) => e.out.set(b, at)),
  "ctx.readbackInto": (e) => ctx.readbackInto(e.ptr, e.out),
  "writeBuffer + wait": async (e) => {
    device.queue.writeBuffer(e.buffer, 0, e.host);
    await device.queue.onSubmittedWorkDone();
  },
  "ctx.upload + wait": async (e) => {
    ctx.upload(e.ptr, e.host);
    await device.queue.onSubmittedWorkDone();
  },
};
const KIND = { "DeviceTransfers.read": "read", "ctx.readbackInto": "read", "ctx.upload + wait": "write" };

/** samples[n][variant][class] = µs[] */
const samples = new Map(small.map((n) => [n, {}]));
const random = seeded(33);
for (let r = 0; r <= rounds; r++) {
  for (const n of shuffled([...small, ...large], random)) {
    const e = envs.get(n);
    for (const name of shuffled(Object.keys(calls), random)) {
      const isSmall = samples.has(n);
      if (isSmall && idleMs > 0) {
        await device.queue.onSubmittedWorkDone();
        await new Promise((resolve) => setTimeout(resolve, idleMs));
      }
      const kind = KIND[name];
      if (kind) {
        taken[kind] = [];
        made[kind] = 0;
      }
      const t0 = performance.now();
      await calls[name](e);
      const us = (performance.now() - t0) * 1000;
      const cls = kind ? classOf(kind, n) : "all";
      if (r === 0 || !isSmall) continue; // the first round: every size's first call on the device
      const byVariant = samples.get(n);
      byVariant[name] ??= {};
      byVariant[name][cls] ??= [];
      byVariant[name][cls].push(us);
    }
  }
}

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const result = { adapter: info ? `${info.vendor} ${info.device || info.architecture}` : "unknown", rounds, idleMs };
result.sizes = [];
console.log(
  `${result.adapter}: ${rounds} rounds, small sizes ${idleMs > 0 ? `after ${idleMs} ms idle` : "back to back"}`,
);
for (const [n, byVariant] of samples) {
  const row = { bytes: n, variants: {} };
  for (const [name, byClass] of Object.entries(byVariant)) {
    row.variants[name] = {};
    for (const [cls, list] of Object.entries(byClass))
      row.variants[name][cls] = { count: list.length, medianUs: median(list) };
  }
  const raw = row.variants.raw.all.medianUs;
  const turn = row.variants["raw, 2 buffers in turn"].all.medianUs;
  const big = row.variants["raw, 64 KiB staging"].all.medianUs;
  const wb = row.variants["writeBuffer + wait"].all.medianUs;
  const line = (name, anchor) =>
    Object.entries(row.variants[name])
      .map(([cls, s]) => `${cls} ${s.count}× ${s.medianUs.toFixed(1)} µs (${(anchor / s.medianUs).toFixed(2)}×)`)
      .join(", ");
  console.log(
    `${n} B: raw ${raw.toFixed(1)} µs; 2 buffers in turn ${turn.toFixed(1)} µs (${(raw / turn).toFixed(2)}×), 64 KiB staging ${big.toFixed(1)} µs (${(raw / big).toFixed(2)}×)`,
  );
  console.log(`${" ".repeat(String(n).length)}    DeviceTransfers.read ${line("DeviceTransfers.read", raw)}`);
  console.log(`${" ".repeat(String(n).length)}    readbackInto ${line("ctx.readbackInto", raw)}`);
  console.log(
    `${" ".repeat(String(n).length)}    writeBuffer + wait ${wb.toFixed(1)} µs; upload ${line("ctx.upload + wait", wb)}`,
  );
  result.sizes.push(row);
}
if (args.out) writeFileSync(args.out, `${JSON.stringify(result, null, 1)}\n`);
process.exit(0);
