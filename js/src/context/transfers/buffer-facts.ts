/**
 * A GPUBuffer's size and usage, read once per buffer: both never change, and
 * reading them through the WebGPU binding costs 0.2–0.4 µs a read in dawn.node
 * (measured), several per transfer — most of webdlpack's cost on a 1 KiB
 * readback before this cache. Kept on the buffer under a symbol of this copy of
 * webdlpack (a property load; a WeakMap lookup per transfer step, three per small
 * readback, cost more there), or in a WeakMap for a buffer that takes no new
 * property (a frozen stand-in).
 */
const FACTS = Symbol("webdlpack.bufferFacts");

/** What is known of one buffer. */
interface Facts {
  readonly size: number;
  readonly usage: number;
}

const frozen = new WeakMap<GPUBuffer, Facts>();

/** `buffer.size` and `buffer.usage`, cached per buffer. */
export function bufferFacts(buffer: GPUBuffer): Facts {
  return (buffer as unknown as { [FACTS]?: Facts })[FACTS] ?? remember(buffer);
}

function remember(buffer: GPUBuffer): Facts {
  let f = frozen.get(buffer);
  if (f !== undefined) return f;
  f = { size: buffer.size, usage: buffer.usage };
  try {
    Object.defineProperty(buffer, FACTS, { value: f });
  } catch {
    frozen.set(buffer, f);
  }
  return f;
}
