/**
 * A GPUBuffer's size and usage, read once per buffer: both never change, and
 * reading them through the WebGPU binding costs 0.2–0.4 µs a read in dawn.node
 * (measured), several per transfer — most of webdlpack's cost on a 1 KiB
 * readback before this cache.
 */
const facts = new WeakMap<GPUBuffer, { size: number; usage: number }>();

/** `buffer.size` and `buffer.usage`, cached per buffer. */
export function bufferFacts(buffer: GPUBuffer): { size: number; usage: number } {
  let f = facts.get(buffer);
  if (f === undefined) {
    f = { size: buffer.size, usage: buffer.usage };
    facts.set(buffer, f);
  }
  return f;
}
