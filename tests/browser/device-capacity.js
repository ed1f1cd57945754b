// A WebGPU device of limited capacity, for the memory-budget tests: SwiftShader (the CI's GPU) takes
// host memory until the machine runs out, so a device that refuses past `capacity` bytes is made here,
// the way WebGPU refuses: createBuffer returns an unusable buffer and the out-of-memory error goes to the
// innermost "out-of-memory" error scope, else to the device's uncapturederror event. It wraps
// GPUDevice.prototype / GPUBuffer.prototype, so install it before anything creates buffers (before setup).
// It also tallies, on its own, the bytes every device holds: what the accounting under test must match.

/** Install; returns the live tally `{held, peak, refused, refusedBytes}` (capacity Infinity: only the tally). */
export function limitDeviceCapacity(capacity) {
  const device = GPUDevice.prototype;
  const bufferProto = GPUBuffer.prototype;
  const create = device.createBuffer;
  const push = device.pushErrorScope;
  const pop = device.popErrorScope;
  const destroy = bufferProto.destroy;
  const live = new Map();
  const scopes = new WeakMap();
  const tally = { held: 0, peak: 0, refused: 0, refusedBytes: 0 };
  device.pushErrorScope = function (filter) {
    if (!scopes.has(this)) scopes.set(this, []);
    scopes.get(this).push({ filter, error: null });
    return push.call(this, filter);
  };
  device.popErrorScope = function () {
    const mine = scopes.get(this)?.pop();
    return pop.call(this).then((error) => error ?? mine?.error ?? null);
  };
  device.createBuffer = function (descriptor) {
    if (tally.held + descriptor.size > capacity) {
      tally.refused += 1;
      tally.refusedBytes += descriptor.size;
      // An unusable buffer with the size and usage asked for (using it is a validation error), as an
      // out-of-memory createBuffer returns: made, then destroyed at once (it holds nothing).
      const invalid = create.call(this, descriptor);
      destroy.call(invalid);
      const error = new GPUOutOfMemoryError(`device capacity ${capacity} bytes: ${descriptor.size} more refused`);
      const scope = [...(scopes.get(this) ?? [])].reverse().find((s) => s.filter === "out-of-memory");
      if (scope !== undefined) scope.error ??= error;
      else this.dispatchEvent(new GPUUncapturedErrorEvent("uncapturederror", { error }));
      return invalid;
    }
    const buffer = create.call(this, descriptor);
    live.set(buffer, buffer.size);
    tally.held += buffer.size;
    tally.peak = Math.max(tally.peak, tally.held);
    return buffer;
  };
  bufferProto.destroy = function () {
    const size = live.get(this);
    if (size !== undefined) {
      live.delete(this);
      tally.held -= size;
    }
    return destroy.call(this);
  };
  return tally;
}
