#!/usr/bin/env node
/**
 * Why a writeBuffer of a few MiB is slower on a long-lived device than on a fresh one (bench/gpu/app.js: dawn.node
 * on the H200, 4 MiB writeBuffer + wait 1.75 ms in the long-lived rounds, 0.36 ms in the fresh-device warm rounds):
 * on one device, a timed upload of `n` bytes after an untimed one of another size (each waited for), in interleaved
 * rounds. The hand-written ways only: writeBuffer, writeBuffer in two halves, one kept mapped staging buffer.
 *
 *   node bench/gpu/writebuffer-after.mjs [--sizes 4194304,1048576] [--rounds 60] [--out FILE.json]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { seeded, shuffled } from "./suite.js";

const { values: args } = parseArgs({
  options: {
    sizes: { type: "string", default: `${4 * 2 ** 20},${2 ** 20}` },
    rounds: { type: "string", default: "60" },
    out: { type: "string" },
  },
});
const { create, globals } = await import("webgpu");
Object.assign(globalThis, globals);
const gpu = create([]); // kept referenced: a collected instance takes its device down
const adapter = await gpu.requestAdapter({ powerPreference: "high-performance" });
const device = await adapter.requestDevice({ requiredLimits: { maxBufferSize: 2 ** 28 } });
const U = GPUBufferUsage;
const done = () => device.queue.onSubmittedWorkDone();
const before = { "a same-size writeBuffer": 0, "a 1 KiB writeBuffer": 1024, "a 64 MiB writeBuffer": 64 * 2 ** 20 };
const big = new Uint8Array(64 * 2 ** 20).fill(1);
const target = device.createBuffer({ size: 64 * 2 ** 20, usage: U.COPY_DST | U.COPY_SRC });
const result = { adapter: `${adapter.info.vendor} ${adapter.info.device || adapter.info.architecture}`, sizes: [] };

for (const n of args.sizes.split(",").map(Number)) {
  const host = new Uint8Array(n).fill(7);
  const kept = device.createBuffer({ size: n, usage: U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: true });
  let mapped = Promise.resolve();
  const ways = {
    writeBuffer: () => device.queue.writeBuffer(target, 0, host),
    "writeBuffer, two halves": () => {
      device.queue.writeBuffer(target, 0, host, 0, n / 2);
      device.queue.writeBuffer(target, n / 2, host, n / 2, n / 2);
    },
    "kept staging": async () => {
      await mapped;
      new Uint8Array(kept.getMappedRange()).set(host);
      kept.unmap();
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(kept, 0, target, 0, n);
      device.queue.submit([enc.finish()]);
      mapped = kept.mapAsync(GPUMapMode.WRITE);
    },
  };
  const keys = Object.entries(before).flatMap(([b, pre]) => Object.keys(ways).map((w) => [b, pre, w]));
  const label = (b, w) => `${b}: ${w}`;
  const samples = new Map(keys.map(([b, , w]) => [label(b, w), []]));
  const random = seeded(n);
  for (let r = 0; r <= Number(args.rounds); r++) {
    for (const [b, pre, w] of shuffled([...keys], random)) {
      device.queue.writeBuffer(target, 0, big, 0, pre === 0 ? n : pre);
      await done();
      const t = performance.now();
      await ways[w]();
      await done();
      if (r > 0) samples.get(label(b, w)).push(performance.now() - t);
    }
  }
  const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const rows = [...samples].map(([k, s]) => ({ variant: k, medianMs: median(s), minMs: Math.min(...s) }));
  result.sizes.push({ bytes: n, rows });
  console.log(`\n${n} bytes on ${result.adapter}: upload + wait after an untimed one, ms median (min)`);
  for (const r of rows) console.log(`  after ${r.variant.padEnd(52)} ${r.medianMs.toFixed(3)} (${r.minMs.toFixed(3)})`);
  await mapped;
  kept.destroy();
}
if (args.out) writeFileSync(args.out, `${JSON.stringify(result, null, 1)}\n`);
process.exit(0);
