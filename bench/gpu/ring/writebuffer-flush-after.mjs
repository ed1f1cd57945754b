// 4 MiB (and 2, 3 MiB) writeBuffer + wait after other uploads, with / without an empty submit after each writeBuffer.
import { device, done, med, U } from "./device.mjs";
const small = new Uint8Array(1024).fill(1);
const dstSmall = device.createBuffer({ size: 1024, usage: U.STORAGE | U.COPY_DST });
const big = new Uint8Array(16 << 20).fill(2);
const dstBig = device.createBuffer({ size: 16 << 20, usage: U.STORAGE | U.COPY_DST });
for (const n of [2 << 20, 3 << 20, 4 << 20]) {
  const host = new Uint8Array(n).fill(3);
  const dst = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
  const staging = device.createBuffer({ size: n, usage: U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: true });
  const before = {
    "1 KiB writeBuffer": async (f) => {
      device.queue.writeBuffer(dstSmall, 0, small);
      if (f) device.queue.submit([]);
      await done();
    },
    "16 MiB writeBuffer": async (f) => {
      device.queue.writeBuffer(dstBig, 0, big);
      if (f) device.queue.submit([]);
      await done();
    },
    "same-size writeBuffer": async (f) => {
      device.queue.writeBuffer(dst, 0, host);
      if (f) device.queue.submit([]);
      await done();
    },
  };
  const out = [];
  for (const [name, f] of Object.entries(before)) {
    const r = { plain: [], flushed: [], staged: [] };
    for (let i = 0; i < 24; i++) {
      for (const k of ["plain", "flushed", "staged"]) {
        await f(k === "flushed");
        const t = performance.now();
        if (k === "staged") {
          if (staging.mapState !== "mapped") await staging.mapAsync(GPUMapMode.WRITE).then(() => {});
          const t1 = performance.now();
          new Uint8Array(staging.getMappedRange()).set(host);
          staging.unmap();
          const enc = device.createCommandEncoder();
          enc.copyBufferToBuffer(staging, 0, dst, 0, n);
          device.queue.submit([enc.finish()]);
          staging.mapAsync(GPUMapMode.WRITE).catch(() => {});
          await done();
          r[k].push(performance.now() - t1);
          continue;
        }
        device.queue.writeBuffer(dst, 0, host);
        if (k === "flushed") device.queue.submit([]);
        await done();
        r[k].push(performance.now() - t);
      }
    }
    out.push(
      `after ${name}: plain ${med(r.plain).toFixed(3)} flushed ${med(r.flushed).toFixed(3)} kept staging ${med(r.staged).toFixed(3)}`,
    );
  }
  console.log(`${n >> 20} MiB: ${out.join(" | ")}`);
}
process.exit(0);
