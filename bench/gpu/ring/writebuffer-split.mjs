// Where a repeated 4 MiB upload's time goes on a fresh device (no webdlpack): writeBuffer's call vs wait, and a kept
// mapped staging buffer's; then the same with a 16 MiB writeBuffer between (the long-lived pattern).
import { device, med, U } from "./device.mjs";
const n = 4 * 2 ** 20;
const host = new Uint8Array(n).fill(3);
const big = new Uint8Array(16 * 2 ** 20).fill(4);
const dst = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
const dstBig = device.createBuffer({ size: big.byteLength, usage: U.STORAGE | U.COPY_DST });
const staging = device.createBuffer({ size: n, usage: U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: true });
async function run(label, between) {
  const r = { wbCall: [], wbWait: [], stCall: [], stWait: [] };
  for (let i = 0; i < 60; i++) {
    if (between) {
      device.queue.writeBuffer(dstBig, 0, big);
      await device.queue.onSubmittedWorkDone();
    }
    let t = performance.now();
    device.queue.writeBuffer(dst, 0, host);
    let t1 = performance.now();
    await device.queue.onSubmittedWorkDone();
    r.wbCall.push(t1 - t);
    r.wbWait.push(performance.now() - t1);
    if (between) {
      device.queue.writeBuffer(dstBig, 0, big);
      await device.queue.onSubmittedWorkDone();
    }
    if (staging.mapState !== "mapped") await staging.mapAsync(GPUMapMode.WRITE);
    t = performance.now();
    new Uint8Array(staging.getMappedRange()).set(host);
    staging.unmap();
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(staging, 0, dst, 0, n);
    device.queue.submit([enc.finish()]);
    const remap = staging.mapAsync(GPUMapMode.WRITE);
    t1 = performance.now();
    await device.queue.onSubmittedWorkDone();
    r.stCall.push(t1 - t);
    r.stWait.push(performance.now() - t1);
    await remap;
  }
  console.log(label, Object.fromEntries(Object.entries(r).map(([k, v]) => [k, med(v.slice(10)).toFixed(3)])));
}
await run("4 MiB alone:", false);
await run("4 MiB with 16 MiB writeBuffers between:", true);
await run("4 MiB alone again:", false);
process.exit(0);
