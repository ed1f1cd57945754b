// The device the scripts here time on: dawn.node's first adapter, with no webdlpack code; and their helpers.
const { create, globals } = await import("webgpu");
Object.assign(globalThis, globals);
/** Kept referenced: a collected instance takes its device down. */
export const gpu = create([]);
export const device = await (await gpu.requestAdapter()).requestDevice();
export const U = GPUBufferUsage;
export const done = () => device.queue.onSubmittedWorkDone();
/** The median of `a` (upper middle for an even count). */
export const med = (a) => [...a].sort((x, y) => x - y)[a.length >> 1];
/** `queue.writeBuffer(dst, 0, host)`, then the queue's completion; returns the call's own ms (its synchronous part). */
export async function timedWriteBuffer(dst, host) {
  const t = performance.now();
  device.queue.writeBuffer(dst, 0, host);
  const call = performance.now() - t;
  await done();
  return call;
}

/**
 * The work before a timed upload that the scripts here share, each + wait: a 1 KiB writeBuffer, a 16 MiB one, a
 * 16 MiB GPU copy, a 1 KiB writeBuffer then 5 ms idle. Name → async function.
 */
export function otherWork() {
  const small = new Uint8Array(1024).fill(1);
  const dstSmall = device.createBuffer({ size: 1024, usage: U.STORAGE | U.COPY_DST });
  const big = new Uint8Array(16 << 20).fill(2);
  const dstBig = device.createBuffer({ size: 16 << 20, usage: U.STORAGE | U.COPY_DST | U.COPY_SRC });
  const copyDst = device.createBuffer({ size: 16 << 20, usage: U.STORAGE | U.COPY_DST });
  return {
    "1 KiB writeBuffer": async () => {
      device.queue.writeBuffer(dstSmall, 0, small);
      await done();
    },
    "16 MiB writeBuffer": async () => {
      device.queue.writeBuffer(dstBig, 0, big);
      await done();
    },
    "a 16 MiB GPU copy": async () => {
      const enc = device.createCommandEncoder();
      enc.copyBufferToBuffer(dstBig, 0, copyDst, 0, 16 << 20);
      device.queue.submit([enc.finish()]);
      await done();
    },
    "1 KiB writeBuffer, 5 ms idle": async () => {
      device.queue.writeBuffer(dstSmall, 0, small);
      await done();
      await new Promise((resolve) => setTimeout(resolve, 5));
    },
  };
}

/** Each of `ways` (name → upload of the size timed) as the work before a timed call: "same-size <name>", + wait. */
export function sameSize(ways) {
  return Object.fromEntries(
    Object.entries(ways).map(([name, way]) => [
      `same-size ${name}`,
      async () => {
        await way();
        await done();
      },
    ]),
  );
}

/** An upload of `host` into `dst` through one kept MAP_WRITE buffer, mapped again after each use (waited for if not yet). */
export function keptStaging(dst, host) {
  const n = host.byteLength;
  const staging = device.createBuffer({ size: n, usage: U.MAP_WRITE | U.COPY_SRC, mappedAtCreation: true });
  let mapping = Promise.resolve();
  return async () => {
    if (staging.mapState !== "mapped") await mapping;
    new Uint8Array(staging.getMappedRange()).set(host);
    staging.unmap();
    const enc = device.createCommandEncoder();
    enc.copyBufferToBuffer(staging, 0, dst, 0, n);
    device.queue.submit([enc.finish()]);
    mapping = staging.mapAsync(GPUMapMode.WRITE);
  };
}
