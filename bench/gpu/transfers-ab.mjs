// In one process: the transfers layer (DeviceTransfers.readKnown / readNewKnown) of this build and of another one
// (OLD_DIST: its js/dist, default /tmp/wt-old/js/dist) on one device, interleaved with a hand-written readback; medians
// µs.   OLD_DIST=/path/js/dist node bench/gpu/transfers-ab.mjs [bytes] [rounds]
import { seeded, shuffled } from "./suite.js";
const { create, globals } = await import("webgpu");
Object.assign(globalThis, globals);
const webdlpack = await import("../../js/dist/index.js");
const tNew = await import("../../js/dist/context/transfers/index.js");
const tOld = await import(`${process.env.OLD_DIST ?? "/tmp/wt-old/js/dist"}/context/transfers/index.js`);
const ctx = webdlpack.getContext();
await ctx.setup({ gpu: create([]) });
const device = ctx.getWebGPUDevice(0);
const U = GPUBufferUsage,
  READ = GPUMapMode.READ;
const n = Number(process.argv[2] ?? 1024);
const srcPtr = await ctx.allocWebGPUChecked(n, { usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
const src = ctx.gpuPointerToBuffer(srcPtr);
const known = { buffer: src, size: src.size, usage: src.usage };
const out = new Uint8Array(n);
const sink = (b, at) => out.set(b, at);
const staging = device.createBuffer({ size: n, usage: U.MAP_READ | U.COPY_DST });
const dNew = tNew.transfersFor(device),
  dOld = new tOld.DeviceTransfers(device, "old", (b) => b.destroy());
const V = {
  raw: async () => {
    const e = device.createCommandEncoder();
    e.copyBufferToBuffer(src, 0, staging, 0, n);
    device.queue.submit([e.finish()]);
    await staging.mapAsync(READ, 0, n);
    out.set(new Uint8Array(staging.getMappedRange(0, n)));
    staging.unmap();
  },
  "old readKnown": () => dOld.readKnown(known, 0, n, sink),
  "new readKnown": () => dNew.readKnown(known, 0, n, sink),
  "old readNewKnown": () => dOld.readNewKnown(known, 0, n),
  "new readNewKnown": () => dNew.readNewKnown(known, 0, n),
};
const names = Object.keys(V);
for (const k of names) for (let i = 0; i < 20; i++) await V[k]();
const s = Object.fromEntries(names.map((k) => [k, []]));
const rnd = seeded(5);
for (let r = 0; r < Number(process.argv[3] ?? 600); r++)
  for (const k of shuffled([...names], rnd)) {
    const t = performance.now();
    await V[k]();
    s[k].push(performance.now() - t);
  }
const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1] * 1000;
for (const k of names) console.log(k.padEnd(18), med(s[k]).toFixed(1));
process.exit(0);
