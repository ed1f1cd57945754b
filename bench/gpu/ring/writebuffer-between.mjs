// Consecutive 4 MiB writeBuffers: what between them brings back the fast call? (dawn.node on the GPU)
import { device, done, med, U, timedWriteBuffer } from "./device.mjs";
const n = 4 * 2 ** 20;
const host = new Uint8Array(n).fill(3);
const dst = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
const tiny = device.createBuffer({ size: 256, usage: U.MAP_READ | U.COPY_DST });
const wb = () => timedWriteBuffer(dst, host);
const between = {
  nothing: async () => {},
  "timer 1 ms": () => new Promise((r) => setTimeout(r, 1)),
  "timer 10 ms": () => new Promise((r) => setTimeout(r, 10)),
  "tiny mapAsync READ": async () => {
    await tiny.mapAsync(GPUMapMode.READ);
    tiny.unmap();
  },
  "1 KiB writeBuffer": async () => {
    device.queue.writeBuffer(dst, 0, host, 0, 1024);
    await done();
  },
  "empty submit + done": async () => {
    device.queue.submit([]);
    await done();
  },
};
for (let rep = 0; rep < 2; rep++)
  for (const [name, f] of Object.entries(between)) {
    const s = [];
    await wb();
    for (let i = 0; i < 12; i++) {
      await f();
      s.push(await wb());
    }
    console.log(
      `${name.padEnd(22)} writeBuffer call median ${med(s).toFixed(3)} ms (${s
        .slice(0, 5)
        .map((x) => x.toFixed(2))
        .join(" ")} …)`,
    );
  }
process.exit(0);
