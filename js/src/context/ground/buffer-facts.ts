/**
 * A GPUBuffer's size and usage, read once per buffer: both never change, and
 * reading them through the WebGPU binding costs 0.2–0.4 µs a read in dawn.node
 * (measured), several per transfer — most of webdlpack's cost on a 1 KiB
 * readback before this cache. Kept on the buffer under a symbol of this copy of
 * webdlpack (a property load; a WeakMap lookup per transfer step, three per small
 * readback, cost more there), or in a WeakMap for a buffer that takes no new
 * property (a frozen stand-in). A pointer's table entry carries the same three
 * facts itself (pointers/buffer-table.ts), so a transfer through a pointer reads
 * them from the one object it already holds.
 */
const FACTS = Symbol("webdlpack.bufferFacts");

/** A buffer with its size and usage at hand: the facts kept for it here, or a pointer's table entry. */
export interface KnownBuffer {
  readonly buffer: GPUBuffer;
  readonly size: number;
  readonly usage: number;
}

const frozen = new WeakMap<GPUBuffer, KnownBuffer>();

/** `buffer` with its `size` and `usage`, cached per buffer. */
export function bufferFacts(buffer: GPUBuffer): KnownBuffer {
  return (buffer as unknown as { [FACTS]?: KnownBuffer })[FACTS] ?? remember(buffer);
}

function remember(buffer: GPUBuffer): KnownBuffer {
  let f = frozen.get(buffer);
  if (f !== undefined) return f;
  f = { buffer, size: buffer.size, usage: buffer.usage };
  try {
    Object.defineProperty(buffer, FACTS, { value: f });
  } catch {
    frozen.set(buffer, f);
  }
  return f;
}
