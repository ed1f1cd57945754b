// Does a single writeBuffer among kept-staging uploads (a probe) see writeBuffer's fast state? 4 MiB, fresh device.
import { device, done, U, timedWriteBuffer } from "./device.mjs";
const n = 4 * 2 ** 20;
const host = new Uint8Array(n).fill(3);
const dst = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
const staging = device.createBuffer({ size: n, usage: U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: true });
async function st() {
  if (staging.mapState !== "mapped") await staging.mapAsync(GPUMapMode.WRITE);
  const t = performance.now();
  new Uint8Array(staging.getMappedRange()).set(host);
  staging.unmap();
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(staging, 0, dst, 0, n);
  device.queue.submit([enc.finish()]);
  const call = performance.now() - t;
  staging.mapAsync(GPUMapMode.WRITE).catch(() => {});
  await done();
  return call;
}
const wb = () => timedWriteBuffer(dst, host);
const f = (a) => a.map((x) => x.toFixed(3)).join(" ");
for (let rep = 0; rep < 4; rep++) {
  const s = [];
  for (let i = 0; i < 15; i++) s.push(await st());
  const w = [];
  for (let i = 0; i < 4; i++) w.push(await wb());
  console.log(`staging calls (last 3): ${f(s.slice(-3))} | then writeBuffer x4: ${f(w)}`);
}
const s2 = [];
for (let i = 0; i < 15; i++) s2.push(await st());
for (let gap = 0; gap < 3; gap++) {
  const w1 = await wb();
  const s = [];
  for (let i = 0; i < 15; i++) s.push(await st());
  console.log(`single probe after 15 staging: ${w1.toFixed(3)}`);
}
process.exit(0);
