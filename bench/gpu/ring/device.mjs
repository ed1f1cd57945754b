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
