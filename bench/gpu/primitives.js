// The anchors: bare WebGPU transfer primitives, with no webdlpack code, measured in the same run as
// webdlpack's own paths (rows.js). Plain ESM (Node on dawn.node and Chromium load it as is).
//   empty submit + onSubmittedWorkDone        the queue round trip
//   bare mapAsync                             copy to a kept MAP_READ buffer + submit + mapAsync + unmap, bytes never read
//   read into a fresh / reused array          bare mapAsync + one CPU copy of the mapped bytes
//   CPU copy into fresh / touched memory      no GPU at all: the CPU-side limit
//   writeBuffer + wait                        queue.writeBuffer + onSubmittedWorkDone
//   mappedAtCreation staging + wait           new COPY_SRC buffer mapped at creation, fill, unmap, copy, submit, wait, destroy
//   MAP_WRITE staging + wait                  a kept MAP_WRITE buffer: mapAsync(WRITE), fill, unmap, copy, submit, wait
//   GPU → GPU copy                            copyBufferToBuffer + submit + wait
import { budgetFor, checkSame, pattern, row, sample } from "./measure.js";

const U = { MAP_READ: 1, MAP_WRITE: 2, COPY_SRC: 4, COPY_DST: 8, STORAGE: 128 };
const READ = 1,
  WRITE = 2;

/** A STORAGE|COPY_SRC|COPY_DST buffer of `n` bytes holding `bytes` (written and waited for). */
export async function filledBuffer(device, bytes) {
  const buffer = device.createBuffer({ size: bytes.byteLength, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
  device.queue.writeBuffer(buffer, 0, bytes);
  await device.queue.onSubmittedWorkDone();
  return buffer;
}

/** Copy `n` bytes of `src` into `staging` and map it; returns the mapped range (caller unmaps). */
async function copyAndMap(device, src, staging, n) {
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(src, 0, staging, 0, n);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(READ, 0, n);
  return staging.getMappedRange(0, n);
}

/** The queue round trip alone. */
export async function emptySubmitRow(device) {
  const s = await sample(
    async () => {
      device.queue.submit([]);
      await device.queue.onSubmittedWorkDone();
    },
    { warmup: 20, minRuns: 200, maxRuns: 2000, budgetMs: 300 },
  );
  return row("empty submit + onSubmittedWorkDone", 0, s, { group: "anchor" });
}

/** Readback anchors at `n` bytes. */
export async function readbackAnchors(device, n) {
  const expected = pattern(new Uint8Array(n), 7);
  const src = await filledBuffer(device, expected);
  const staging = device.createBuffer({ size: n, usage: U.MAP_READ | U.COPY_DST });
  const reused = new Uint8Array(n).fill(1);
  const b = budgetFor(n);
  const rows = [];
  rows.push(
    row(
      "bare mapAsync (copy + submit + map + unmap)",
      n,
      await sample(async () => {
        await copyAndMap(device, src, staging, n);
        staging.unmap();
      }, b),
      { group: "anchor", direction: "readback" },
    ),
  );
  let fresh;
  rows.push(
    row(
      "read into a fresh array (raw)",
      n,
      await sample(async () => {
        const mapped = await copyAndMap(device, src, staging, n);
        fresh = new Uint8Array(n);
        fresh.set(new Uint8Array(mapped));
        staging.unmap();
      }, b),
      { group: "anchor", direction: "readback" },
    ),
  );
  checkSame(fresh, expected, "fresh-array readback");
  rows.push(
    row(
      "read into a reused array (raw)",
      n,
      await sample(async () => {
        const mapped = await copyAndMap(device, src, staging, n);
        reused.set(new Uint8Array(mapped));
        staging.unmap();
      }, b),
      { group: "anchor", direction: "readback" },
    ),
  );
  checkSame(reused, expected, "reused-array readback");
  const host = new Uint8Array(n);
  pattern(host, 3);
  rows.push(
    row(
      "CPU copy into fresh memory",
      n,
      await sample(async () => {
        new Uint8Array(n).set(host);
      }, b),
      { group: "cpu", direction: "cpu" },
    ),
  );
  const touched = new Uint8Array(n).fill(2);
  rows.push(
    row(
      "CPU copy into touched memory",
      n,
      await sample(async () => {
        touched.set(host);
      }, b),
      { group: "cpu", direction: "cpu" },
    ),
  );
  staging.destroy();
  src.destroy();
  return rows;
}

/** Upload anchors at `n` bytes: writeBuffer, mappedAtCreation staging, a kept MAP_WRITE staging buffer. */
export async function uploadAnchors(device, n) {
  const host = pattern(new Uint8Array(n), 11);
  const dst = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
  const b = budgetFor(n);
  const rows = [];
  const verify = async (what) => {
    const staging = device.createBuffer({ size: n, usage: U.MAP_READ | U.COPY_DST });
    const got = new Uint8Array(await copyAndMap(device, dst, staging, n)).slice();
    staging.unmap();
    staging.destroy();
    checkSame(got, host, what);
    const enc = device.createCommandEncoder();
    enc.clearBuffer(dst);
    device.queue.submit([enc.finish()]);
  };
  rows.push(
    row(
      "writeBuffer + wait",
      n,
      await sample(async () => {
        device.queue.writeBuffer(dst, 0, host);
        await device.queue.onSubmittedWorkDone();
      }, b),
      { group: "anchor", direction: "upload" },
    ),
  );
  await verify("writeBuffer upload");
  rows.push(
    row(
      "mappedAtCreation staging + wait (raw)",
      n,
      await sample(async () => {
        const staging = device.createBuffer({ size: n, usage: U.COPY_SRC, mappedAtCreation: true });
        new Uint8Array(staging.getMappedRange()).set(host);
        staging.unmap();
        const enc = device.createCommandEncoder();
        enc.copyBufferToBuffer(staging, 0, dst, 0, n);
        device.queue.submit([enc.finish()]);
        await device.queue.onSubmittedWorkDone();
        staging.destroy();
      }, b),
      { group: "anchor", direction: "upload" },
    ),
  );
  await verify("mappedAtCreation upload");
  const kept = device.createBuffer({ size: n, usage: U.MAP_WRITE | U.COPY_SRC });
  rows.push(
    row(
      "MAP_WRITE staging, kept + wait (raw)",
      n,
      await sample(async () => {
        await kept.mapAsync(WRITE, 0, n);
        new Uint8Array(kept.getMappedRange(0, n)).set(host);
        kept.unmap();
        const enc = device.createCommandEncoder();
        enc.copyBufferToBuffer(kept, 0, dst, 0, n);
        device.queue.submit([enc.finish()]);
        await device.queue.onSubmittedWorkDone();
      }, b),
      { group: "anchor", direction: "upload" },
    ),
  );
  await verify("MAP_WRITE upload");
  kept.destroy();
  dst.destroy();
  return rows;
}

/** GPU → GPU copyBufferToBuffer at `n` bytes (submit + wait). */
export async function copyAnchor(device, n) {
  const src = await filledBuffer(device, pattern(new Uint8Array(n), 5));
  const dst = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
  const s = await sample(async () => {
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(src, 0, dst, 0, n);
    device.queue.submit([enc.finish()]);
    await device.queue.onSubmittedWorkDone();
  }, budgetFor(n));
  src.destroy();
  dst.destroy();
  return row("GPU → GPU copyBufferToBuffer + wait (raw)", n, s, { group: "anchor", direction: "gpu" });
}

/**
 * Variants that decide webdlpack's fast paths (n ≥ 4 chunks only): readback in `chunk`-byte pieces
 * (all copies in one submit at once, then map and copy out in order, so the CPU copy of piece k overlaps
 * the mapping of piece k+1), a fresh array touched while the GPU works, and uploads in pieces through
 * kept MAP_WRITE buffers (one submit per piece, so the GPU copy of piece k overlaps the CPU fill of k+1).
 */
export async function chunkVariants(device, n, chunk) {
  if (n < 4 * chunk) return [];
  const expected = pattern(new Uint8Array(n), 19);
  const src = await filledBuffer(device, expected);
  const pieces = Math.ceil(n / chunk);
  const ring = Array.from({ length: pieces }, () =>
    device.createBuffer({ size: chunk, usage: U.MAP_READ | U.COPY_DST }),
  );
  const b = budgetFor(n);
  const rows = [];
  const label = `${chunk / 2 ** 20} MiB pieces`;
  const chunkedInto = async (target, submitEach = false) => {
    let enc = device.createCommandEncoder();
    for (let k = 0; k < pieces; k++) {
      enc.copyBufferToBuffer(src, k * chunk, ring[k], 0, Math.min(chunk, n - k * chunk));
      if (submitEach) {
        device.queue.submit([enc.finish()]);
        enc = device.createCommandEncoder();
      }
    }
    device.queue.submit([enc.finish()]);
    const maps = ring.map((s, k) => s.mapAsync(READ, 0, Math.min(chunk, n - k * chunk)));
    for (let k = 0; k < pieces; k++) {
      await maps[k];
      const len = Math.min(chunk, n - k * chunk);
      target.set(new Uint8Array(ring[k].getMappedRange(0, len)), k * chunk);
      ring[k].unmap();
    }
  };
  const reused = new Uint8Array(n).fill(1);
  rows.push(
    row(`read into a reused array, ${label} (raw)`, n, await sample(() => chunkedInto(reused), b), {
      group: "variant",
      direction: "readback",
    }),
  );
  checkSame(reused, expected, "chunked readback");
  reused.fill(1);
  rows.push(
    row(
      `read into a reused array, ${label}, a submit each (raw)`,
      n,
      await sample(() => chunkedInto(reused, true), b),
      { group: "variant", direction: "readback" },
    ),
  );
  checkSame(reused, expected, "chunked readback, a submit each");
  let fresh;
  rows.push(
    row(
      `read into a fresh array touched while mapping, ${label} (raw)`,
      n,
      await sample(async () => {
        fresh = new Uint8Array(n);
        const enc = device.createCommandEncoder();
        for (let k = 0; k < pieces; k++)
          enc.copyBufferToBuffer(src, k * chunk, ring[k], 0, Math.min(chunk, n - k * chunk));
        device.queue.submit([enc.finish()]);
        const maps = ring.map((s, k) => s.mapAsync(READ, 0, Math.min(chunk, n - k * chunk)));
        for (let p = 0; p < n; p += 4096) fresh[p] = 0;
        for (let k = 0; k < pieces; k++) {
          await maps[k];
          const len = Math.min(chunk, n - k * chunk);
          fresh.set(new Uint8Array(ring[k].getMappedRange(0, len)), k * chunk);
          ring[k].unmap();
        }
      }, b),
      { group: "variant", direction: "readback" },
    ),
  );
  checkSame(fresh, expected, "fresh touched readback");
  for (const s of ring) s.destroy();
  src.destroy();

  const host = pattern(new Uint8Array(n), 23);
  const dst = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
  const wring = Array.from({ length: pieces }, () =>
    device.createBuffer({ size: chunk, usage: U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: true }),
  );
  rows.push(
    row(
      `MAP_WRITE staging, kept, ${label}, premapped + wait (raw)`,
      n,
      await sample(
        async () => {
          for (let k = 0; k < pieces; k++) {
            const len = Math.min(chunk, n - k * chunk);
            new Uint8Array(wring[k].getMappedRange(0, len)).set(host.subarray(k * chunk, k * chunk + len));
            wring[k].unmap();
            const enc = device.createCommandEncoder();
            enc.copyBufferToBuffer(wring[k], 0, dst, k * chunk, len);
            device.queue.submit([enc.finish()]);
          }
          await device.queue.onSubmittedWorkDone();
        },
        { ...b, setup: () => Promise.all(wring.map((s) => (s.mapState === "mapped" ? undefined : s.mapAsync(WRITE)))) },
      ),
      { group: "variant", direction: "upload", note: "re-mapping the kept buffers is untimed (done between uploads)" },
    ),
  );
  rows.push(
    row(
      `writeBuffer in ${label} + wait (raw)`,
      n,
      await sample(async () => {
        for (let k = 0; k < pieces; k++)
          device.queue.writeBuffer(dst, k * chunk, host, k * chunk, Math.min(chunk, n - k * chunk));
        await device.queue.onSubmittedWorkDone();
      }, b),
      { group: "variant", direction: "upload" },
    ),
  );
  for (const s of wring) s.destroy();
  dst.destroy();
  return rows;
}
