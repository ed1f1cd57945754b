// writeBuffer + wait, back to back, with and without an empty submit right after the writeBuffer (dawn.node, GPU).
import { device, done, med, U } from "./device.mjs";
for (const n of [1024, 16384, 262144, 1 << 20, 4 << 20, 16 << 20, 64 << 20]) {
  const host = new Uint8Array(n).fill(3);
  const dst = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
  const r = { plain: [], plainCall: [], flushed: [], flushedCall: [] };
  for (let i = 0; i < (n >= 16 << 20 ? 12 : 40); i++) {
    for (const k of i % 2 ? ["plain", "flushed"] : ["flushed", "plain"]) {
      for (let j = 0; j < 2; j++) {
        // two in a row: the second is the consecutive case
        const t = performance.now();
        device.queue.writeBuffer(dst, 0, host);
        if (k === "flushed") device.queue.submit([]);
        const call = performance.now() - t;
        await done();
        if (j === 1) {
          r[k].push(performance.now() - t);
          r[k + "Call"].push(call);
        }
      }
    }
  }
  console.log(
    `${String(n).padStart(9)} B: writeBuffer + wait ${med(r.plain).toFixed(3)} ms (call ${med(r.plainCall).toFixed(3)}); with submit([]) after ${med(r.flushed).toFixed(3)} ms (call ${med(r.flushedCall).toFixed(3)})`,
  );
  dst.destroy();
}
process.exit(0);
