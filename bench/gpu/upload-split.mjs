#!/usr/bin/env node
/**
 * Where a staged upload's time goes (Node + dawn.node; issue 33: on the H200, ctx.upload of 4 MiB through kept
 * staging took 0.68 ms warm and 0.90 long-lived against a hand-written kept staging buffer's 0.59 / 0.74). On one
 * device set up by webdlpack, each timed call split in two: the synchronous part (`call`: the copy into mapped
 * memory, unmap, submit; or writeBuffer) and the wait for the queue (`wait`). Before each timed call an untimed one
 * of another kind (each waited for), as an application's other transfers come between:
 *   nothing, a 1 KiB writeBuffer, a 64 MiB ctx.upload.
 * Ways: writeBuffer; one kept staging buffer of the size (mapped again after use); the same in a buffer four times
 * the size (as a larger kept class serves a smaller upload); `DeviceTransfers.write` (the transfers layer);
 * `ctx.upload` (the public call). Medians of interleaved rounds in a seeded order.
 *
 *   node bench/gpu/upload-split.mjs [--sizes 262144,1048576,4194304,16777216] [--rounds 40] [--out FILE.json]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { seeded, shuffled } from "./suite.js";

const { values: args } = parseArgs({
  options: {
    sizes: { type: "string", default: `${256 * 1024},${2 ** 20},${4 * 2 ** 20},${16 * 2 ** 20}` },
    rounds: { type: "string", default: "40" },
    out: { type: "string" },
  },
});
const { create, globals } = await import("webgpu");
Object.assign(globalThis, globals);
const webdlpack = await import("../../js/dist/index.js");
const { transfersFor } = await import("../../js/dist/context/transfers/index.js");
const gpu = create([]); // kept referenced: a collected instance takes its device down
const ctx = webdlpack.getContext();
await ctx.setup({ gpu });
const device = ctx.getWebGPUDevice(0);
const transfers = transfersFor(device);
const U = GPUBufferUsage;
const done = () => device.queue.onSubmittedWorkDone();
const BIG = 64 * 2 ** 20;
const bigHost = new Uint8Array(BIG).fill(1);
const bigPtr = await ctx.allocWebGPUChecked(BIG, { label: "upload-split filler" });
const small = new Uint8Array(1024).fill(2);
const before = {
  nothing: () => undefined,
  "a 1 KiB writeBuffer": () => device.queue.writeBuffer(ctx.gpuPointerToBuffer(bigPtr), 0, small),
  "a 64 MiB ctx.upload": () => ctx.upload(bigPtr, bigHost),
};
const cal = ctx.transferStats(0).calibration;
const info = (await gpu.requestAdapter())?.info;
const result = {
  adapter: `${info?.vendor} ${info?.device || info?.architecture}`,
  decided: cal?.upload?.map((c) => ({ bytes: c.bytes, cold: c.cold, warm: c.warm, pieceBytes: c.pieceBytes })),
  sizes: [],
};

/** One kept staging buffer of `size` bytes used for `n`-byte uploads into `dst`. */
function keptWay(n, size, dst, host) {
  const buffer = device.createBuffer({ size, usage: U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: true });
  let mapped = Promise.resolve();
  return {
    pre: () => mapped,
    call: () => {
      new Uint8Array(buffer.getMappedRange(0, n)).set(host);
      buffer.unmap();
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(buffer, 0, dst, 0, n);
      device.queue.submit([enc.finish()]);
      mapped = buffer.mapAsync(GPUMapMode.WRITE);
    },
    dispose: () => buffer.destroy(),
  };
}

for (const n of args.sizes.split(",").map(Number)) {
  const host = new Uint8Array(n).fill(7);
  const dstPtr = await ctx.allocWebGPUChecked(n, { label: "upload-split destination" });
  const dst = ctx.gpuPointerToBuffer(dstPtr);
  const kept = keptWay(n, n, dst, host);
  const kept4 = keptWay(n, 4 * n, dst, host);
  const paths = new Map();
  const ways = {
    writeBuffer: { call: () => device.queue.writeBuffer(dst, 0, host) },
    "kept staging": kept,
    "kept staging, a buffer 4x the size": kept4,
    "DeviceTransfers.write": { call: () => transfers.write(dst, 0, host) },
    "ctx.upload": { call: () => ctx.upload(dstPtr, host) },
  };
  const keys = Object.keys(before).flatMap((b) => Object.keys(ways).map((w) => [b, w]));
  const label = (b, w) => `after ${b}: ${w}`;
  const samples = new Map(keys.map(([b, w]) => [label(b, w), { call: [], wait: [], total: [] }]));
  const random = seeded(n);
  for (let r = 0; r <= Number(args.rounds); r++) {
    for (const [b, w] of shuffled([...keys], random)) {
      before[b]();
      await done();
      const way = ways[w];
      await way.pre?.();
      const t0 = performance.now();
      way.call();
      const t1 = performance.now();
      await done();
      const t2 = performance.now();
      if (w === "ctx.upload") {
        const path = ctx.transferStats(0).lastUploadPath;
        paths.set(path, (paths.get(path) ?? 0) + 1);
      }
      if (r === 0) continue;
      const s = samples.get(label(b, w));
      s.call.push(t1 - t0);
      s.wait.push(t2 - t1);
      s.total.push(t2 - t0);
    }
  }
  const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const rows = [...samples].map(([k, s]) => ({
    variant: k,
    medianMs: median(s.total),
    callMs: median(s.call),
    waitMs: median(s.wait),
    minMs: Math.min(...s.total),
  }));
  const stats = ctx.transferStats(0).write;
  result.sizes.push({ bytes: n, ctxPaths: Object.fromEntries(paths), writeRing: stats, rows });
  console.log(
    `\n${n} bytes: upload + wait after an untimed call, ms median (call / wait) [min]; ctx paths ${JSON.stringify(Object.fromEntries(paths))}`,
  );
  for (const r of rows)
    console.log(
      `  ${r.variant.padEnd(62)} ${r.medianMs.toFixed(3)} (${r.callMs.toFixed(3)} / ${r.waitMs.toFixed(3)}) [${r.minMs.toFixed(3)}]`,
    );
  await kept.pre();
  await kept4.pre();
  kept.dispose();
  kept4.dispose();
  ctx.freeWebGPU(dstPtr);
}
if (args.out) writeFileSync(args.out, `${JSON.stringify(result, null, 1)}\n`);
process.exit(0);
