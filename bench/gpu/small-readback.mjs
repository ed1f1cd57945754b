#!/usr/bin/env node
/**
 * Where a small readback's time goes (Node + dawn.node): a hand-written readback (one kept MAP_READ buffer,
 * copy + submit + mapAsync + copy out), then the same with each piece of bookkeeping webdlpack's readback adds,
 * one at a time, up to `ctx.readbackInto` itself. Variants interleaved in rotating order, medians of `rounds`.
 *
 *   raw                 the hand-written readback (the bench's anchor)
 *   + error scope       pushErrorScope("validation") around the copy, its answer awaited after the map
 *                       (what lets webdlpack refuse a copy WebGPU rejected instead of returning stale bytes)
 *   + loss guard        the map raced against device loss (Inflight.guard: DEVICE_LOST at once on loss)
 *   + staging ring      the staging buffer taken from and given back to the read ring (ReadRing)
 *   replica             all three, inline (readOne's steps without its function frames)
 *   DeviceTransfers.read the transfers layer (read.ts readOne)
 *   ctx.readbackInto    the public call (pointer lookup, target checks, then the above)
 *   raw, fresh array    the hand-written readback into a new array
 *   ctx.readback        the public call into a new array
 *   writeBuffer + wait  the hand-written small upload, waited for
 *   ctx.upload + wait   the public upload, waited for
 *   empty submit        submit([]) + onSubmittedWorkDone, the queue's round trip
 *
 * Each round runs every variant once in a new seeded order (as bench/gpu/suite.js): work a variant leaves for
 * later (webdlpack unmaps a readback's staging in a later task) then lands on a different variant each round,
 * not always on the same successor.
 *
 * Then the same rounds again with cold CPU caches: before each call a `--flush-mib` MiB JS copy (default 8; 0
 * skips these rows) evicts what the previous call left in the caches, as a page's big copies (a large readback,
 * a model's weights) do between its small transfers. There every object and call a variant touches costs.
 *
 * And with `--idle-ms M` (0 skips these rows) the same rounds with the queue drained and an M ms timer before each
 * call, as an application's calls come (issue 33: a 1 KiB ctx.upload after idle measured 0.57× writeBuffer + wait on
 * the H100); the upload's own split is timed too — `DeviceTransfers.upload` (the call ctx.upload makes after the
 * pointer lookup) and `DeviceTransfers.write` (the size-class path, below the direct one).
 *
 *   node bench/gpu/small-readback.mjs [--sizes 1024,16384] [--rounds 400] [--flush-mib 8] [--idle-ms 5] [--out FILE.json]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { seeded, shuffled } from "./suite.js";

const { values: args } = parseArgs({
  options: {
    sizes: { type: "string", default: "1024,16384,262144" },
    rounds: { type: "string", default: "400" },
    "flush-mib": { type: "string", default: "8" },
    "idle-ms": { type: "string", default: "0" },
    out: { type: "string" },
  },
});

const { create, globals } = await import("webgpu");
Object.assign(globalThis, globals);
const webdlpack = await import("../../js/dist/index.js");
const { transfersFor } = await import("../../js/dist/context/transfers/index.js");
const { ReadRing } = await import("../../js/dist/context/transfers/staging.js");
const { Inflight } = await import("../../js/dist/context/transfers/inflight.js");

const ctx = webdlpack.getContext();
await ctx.setup({ gpu: create([]) });
const device = ctx.getWebGPUDevice(0);
const info = (await create([]).requestAdapter())?.info;
const U = GPUBufferUsage;
const READ = GPUMapMode.READ;

/** The variants at `n` bytes: name → async function. */
async function variants(n) {
  const srcPtr = await ctx.allocWebGPUChecked(n, { usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
  const src = ctx.gpuPointerToBuffer(srcPtr);
  device.queue.writeBuffer(src, 0, new Uint8Array(n).fill(7));
  const out = new Uint8Array(n);
  let fresh;
  const host = new Uint8Array(n).fill(9);
  const dstPtr = await ctx.allocWebGPUChecked(n, { usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
  const dst = ctx.gpuPointerToBuffer(dstPtr);
  const staging = device.createBuffer({ size: n, usage: U.MAP_READ | U.COPY_DST });
  const ring = new ReadRing(device, (b) => b.destroy(), 64 * 2 ** 20);
  const inflight = new Inflight(device, "bench");
  const transfers = transfersFor(device);
  const known = { buffer: dst, size: dst.size, usage: dst.usage };
  const sink = (bytes, at) => out.set(bytes, at);
  const copy = (dst) => {
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(src, 0, dst, 0, n);
    device.queue.submit([enc.finish()]);
  };
  const copyOut = (buffer) => {
    out.set(new Uint8Array(buffer.getMappedRange(0, n)));
    buffer.unmap();
  };
  return {
    raw: async () => {
      copy(staging);
      await staging.mapAsync(READ, 0, n);
      copyOut(staging);
    },
    "+ error scope": async () => {
      device.pushErrorScope("validation");
      copy(staging);
      const refused = device.popErrorScope().catch(() => null);
      await staging.mapAsync(READ, 0, n);
      await refused;
      copyOut(staging);
    },
    "+ loss guard": async () => {
      const done = inflight.begin();
      copy(staging);
      await inflight.guard(staging.mapAsync(READ, 0, n));
      copyOut(staging);
      done();
    },
    "+ staging ring": async () => {
      const buffer = ring.take(n);
      copy(buffer);
      await buffer.mapAsync(READ, 0, n);
      copyOut(buffer);
      ring.give(buffer, true);
    },
    replica: async () => {
      const done = inflight.begin();
      const buffer = ring.take(n);
      device.pushErrorScope("validation");
      copy(buffer);
      const refused = device.popErrorScope().catch(() => null);
      await inflight.guard(buffer.mapAsync(READ, 0, n));
      await refused;
      copyOut(buffer);
      ring.give(buffer, true);
      done();
    },
    "DeviceTransfers.read": () => transfers.read(src, 0, n, sink),
    "ctx.readbackInto": () => ctx.readbackInto(srcPtr, out),
    "raw, fresh array": async () => {
      copy(staging);
      await staging.mapAsync(READ, 0, n);
      fresh = new Uint8Array(n);
      fresh.set(new Uint8Array(staging.getMappedRange(0, n)));
      staging.unmap();
    },
    "ctx.readback": async () => {
      fresh = new Uint8Array(await ctx.readback(srcPtr));
    },
    "writeBuffer + wait": async () => {
      device.queue.writeBuffer(dst, 0, host);
      await device.queue.onSubmittedWorkDone();
    },
    "DeviceTransfers.upload + wait": async () => {
      transfers.upload(known, 0, host);
      await device.queue.onSubmittedWorkDone();
    },
    "DeviceTransfers.write + wait": async () => {
      transfers.write(dst, 0, host);
      await device.queue.onSubmittedWorkDone();
    },
    "ctx.upload + wait": async () => {
      ctx.upload(dstPtr, host);
      await device.queue.onSubmittedWorkDone();
    },
    "empty submit": async () => {
      device.queue.submit([]);
      await device.queue.onSubmittedWorkDone();
    },
  };
}

/** The hand-written variant each row is compared with (default: raw). */
const ANCHORS = {
  "raw, fresh array": "raw, fresh array",
  "ctx.readback": "raw, fresh array",
  "writeBuffer + wait": "writeBuffer + wait",
  "ctx.upload + wait": "writeBuffer + wait",
  "DeviceTransfers.upload + wait": "writeBuffer + wait",
  "DeviceTransfers.write + wait": "writeBuffer + wait",
};

const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const rounds = Number(args.rounds);
const flushBytes = Number(args["flush-mib"]) * 2 ** 20;
const flushFrom = new Uint8Array(flushBytes).fill(1);
const flushTo = new Uint8Array(flushBytes);
const idleMs = Number(args["idle-ms"]);
const result = { adapter: info ? `${info.vendor} ${info.device || info.architecture}` : "unknown", rounds, sizes: [] };

/**
 * Median µs per variant of `rounds` interleaved rounds (`idle` rounds: at most 100), each call after a cache flush
 * (`how` "flush") or after the queue drained and an idleMs timer ("idle").
 */
async function measure(v, n, how) {
  const names = Object.keys(v);
  const samples = Object.fromEntries(names.map((k) => [k, []]));
  const random = seeded(n + (how === "flush" ? 1 : how === "idle" ? 2 : 0));
  for (let r = 0; r < (how === "idle" ? Math.min(rounds, 100) : rounds); r++) {
    for (const k of shuffled([...names], random)) {
      if (how === "flush") flushTo.set(flushFrom);
      if (how === "idle") {
        await device.queue.onSubmittedWorkDone();
        await new Promise((resolve) => setTimeout(resolve, idleMs));
      }
      const t0 = performance.now();
      await v[k]();
      samples[k].push(performance.now() - t0);
    }
  }
  return Object.fromEntries(names.map((k) => [k, median(samples[k]) * 1000]));
}

function report(us, title) {
  console.log(`\n${title} (ratio: anchor ÷ variant)`);
  for (const k of Object.keys(us)) {
    const anchor = ANCHORS[k] ?? "raw";
    console.log(`  ${k.padEnd(22)} ${us[k].toFixed(1).padStart(8)}  ${(us[anchor] / us[k]).toFixed(2)}× ${anchor}`);
  }
}

for (const n of args.sizes.split(",").map(Number)) {
  const v = await variants(n);
  for (const k of Object.keys(v)) for (let i = 0; i < 20; i++) await v[k]();
  const us = await measure(v, n, "hot");
  const row = { bytes: n, medianUs: us };
  result.sizes.push(row);
  report(us, `${n} bytes on ${result.adapter}, median µs of ${rounds} interleaved rounds`);
  if (flushBytes > 0) {
    row.flushedMedianUs = await measure(v, n, "flush");
    row.flushMiB = flushBytes / 2 ** 20;
    report(row.flushedMedianUs, `${n} bytes, cold CPU caches (a ${row.flushMiB} MiB copy before each call)`);
  }
  if (idleMs > 0) {
    row.idleMedianUs = await measure(v, n, "idle");
    row.idleMs = idleMs;
    report(row.idleMedianUs, `${n} bytes after idle (queue drained, a ${idleMs} ms timer before each call)`);
  }
}
if (args.out) writeFileSync(args.out, `${JSON.stringify(result, null, 1)}\n`);
process.exit(0);
