// ctx.upload of 2–4 MiB + wait against the hand-written kept staging buffer and writeBuffer, each after the same
// other work (the orders bench/gpu/app.js's long-lived rounds make). Medians of 24, ms; the path ctx.upload took.
import { device, done, med, keptStaging, otherWork, sameSize, U } from "./device.mjs";
const webdlpack = await import(process.env.DIST ?? "../../../js/dist/index.js");
const ctx = webdlpack.getContext();
await ctx.setup({ device });
const shared = otherWork();
for (const n of [2 << 20, 4 << 20]) {
  const host = new Uint8Array(n).fill(3);
  const dstPtr = await ctx.allocWebGPUChecked(n, { usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
  const dst = ctx.gpuPointerToBuffer(dstPtr);
  const paths = new Map();
  const ways = {
    writeBuffer: () => device.queue.writeBuffer(dst, 0, host),
    kept: keptStaging(dst, host),
    ctx: () => {
      ctx.upload(dstPtr, host);
      const path = ctx.transferStats().lastUploadPath;
      paths.set(path, (paths.get(path) ?? 0) + 1);
    },
  };
  const before = { ...shared, ...sameSize(ways) };
  const lines = [];
  for (const [name, f] of Object.entries(before)) {
    const r = { writeBuffer: [], kept: [], ctx: [] };
    const order = Object.keys(r);
    for (let i = 0; i < 24; i++) {
      for (let j = 0; j < order.length; j++) {
        const k = order[(i + j) % order.length];
        await f();
        const t = performance.now();
        await ways[k]();
        await done();
        r[k].push(performance.now() - t);
      }
    }
    lines.push(`after ${name}: ${order.map((k) => `${k} ${med(r[k]).toFixed(3)}`).join(" ")}`);
  }
  console.log(
    `${n >> 20} MiB (ctx.upload paths ${JSON.stringify(Object.fromEntries(paths))}):\n  ${lines.join("\n  ")}`,
  );
}
console.log("write ring:", JSON.stringify(ctx.transferStats().write));
process.exit(0);
