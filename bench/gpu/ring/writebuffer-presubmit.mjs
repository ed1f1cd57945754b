// 2–4 MiB uploads + wait after other work: a plain writeBuffer, an empty submit first and then the writeBuffer
// ("presubmit": the submit lets Dawn take back the upload memory of work already done), or a kept staging buffer.
// Then three uploads back to back before one wait (the GPU still busy with the earlier ones). Medians of 24 (ms).
import { device, done, med, keptStaging, otherWork, sameSize, U } from "./device.mjs";
const shared = otherWork();
for (const n of [1 << 20, 2 << 20, 3 << 20, 4 << 20]) {
  const host = new Uint8Array(n).fill(3);
  const dst = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
  const ways = {
    plain: () => device.queue.writeBuffer(dst, 0, host),
    presubmit: () => {
      device.queue.submit([]);
      device.queue.writeBuffer(dst, 0, host);
    },
    staged: keptStaging(dst, host),
  };
  const before = { ...shared, ...sameSize(ways) };
  const out = [];
  for (const [name, f] of Object.entries(before)) {
    const r = { plain: [], presubmit: [], staged: [] };
    for (let i = 0; i < 24; i++) {
      for (const k of i % 2 ? ["staged", "presubmit", "plain"] : ["plain", "presubmit", "staged"]) {
        await f();
        const t = performance.now();
        await ways[k]();
        await done();
        r[k].push(performance.now() - t);
      }
    }
    out.push(
      `after ${name}: plain ${med(r.plain).toFixed(3)} presubmit ${med(r.presubmit).toFixed(3)} staged ${med(r.staged).toFixed(3)}`,
    );
  }
  // Three uploads back to back, one wait: ms per upload.
  const burst = { plain: [], presubmit: [], staged: [] };
  for (let i = 0; i < 24; i++) {
    for (const k of i % 2 ? ["staged", "presubmit", "plain"] : ["plain", "presubmit", "staged"]) {
      await done();
      const t = performance.now();
      for (let j = 0; j < 3; j++) await ways[k]();
      await done();
      burst[k].push((performance.now() - t) / 3);
    }
  }
  out.push(
    `3 back to back: plain ${med(burst.plain).toFixed(3)} presubmit ${med(burst.presubmit).toFixed(3)} staged ${med(burst.staged).toFixed(3)}`,
  );
  console.log(`${n >> 20} MiB:\n  ${out.join("\n  ")}`);
}
process.exit(0);
