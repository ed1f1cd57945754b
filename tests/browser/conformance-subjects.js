// What the conformance variants (tests/browser/conformance-variants*.js) are made of: webdlpack itself as a
// producer and consumer, and the tools to break one rule at a time — a context with members replaced, a naive
// pointer table, a producer whose struct is edited after the fact, a consumer that checks nothing.
import * as W from "/js/dist/index.js";

/** The key of the global context record (Symbol.for, the same in every realm of the page). */
export const KEY = Symbol.for("webdlpack.context");
/** GPUBufferUsage bits. */
export const STORAGE = 0x80,
  COPY_SRC = 0x4,
  COPY_DST = 0x8;

/** webdlpack as a framework: its Tensor exports (toManaged) and imports (fromManaged). */
export const producer = {
  produce(host, req) {
    const values = new Float32Array(req.values);
    if (req.device === "cpu") {
      const t = W.Tensor.fromTypedArray(values, { shape: req.shape, dtype: "float32" });
      const address = t.toManaged(host);
      t.dispose();
      return address;
    }
    const ctx = W.getContext();
    const p = ctx.allocWebGPU(values.byteLength, { owner: "conformance-producer" });
    ctx.getWebGPUDevice(0).queue.writeBuffer(ctx.gpuPointerToBuffer(p), 0, values);
    const t = W.Tensor.webgpu({
      pointer: p,
      deviceId: 0,
      dtype: "float32",
      shape: req.shape,
      onRelease: () => ctx.freeWebGPU(p),
    });
    const address = t.toManaged(host);
    t.dispose();
    return address;
  },
};
export const consumer = {
  consume(host, address) {
    const t = W.Tensor.fromManaged(host, address, { versioned: true });
    return { values: Array.from(t.view), release: () => t.dispose() };
  },
};

/** The real context with some members replaced. */
export function broken(overrides) {
  const real = W.getContext();
  return new Proxy(real, {
    get(target, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key];
      const v = Reflect.get(target, key);
      return typeof v === "function" ? v.bind(target) : v;
    },
    has(target, key) {
      return Object.hasOwn(overrides, key) ? overrides[key] !== undefined : Reflect.has(target, key);
    },
  });
}

/** A naive pointer table over the real context: small ids, freed ids reused at once. */
export function naiveTable() {
  const real = W.getContext();
  const ids = new Map();
  const free = [];
  let next = 1;
  return broken({
    allocWebGPU: (n, o) => {
      const id = free.pop() ?? next++;
      ids.set(id, real.allocWebGPU(n, o));
      return id;
    },
    allocWebGPUChecked: async (n, o) => {
      const id = free.pop() ?? next++;
      ids.set(id, await real.allocWebGPUChecked(n, o));
      return id;
    },
    gpuPointerToBuffer: (id) => real.gpuPointerToBuffer(ids.get(id) ?? 0),
    gpuPointerInfo: (id) => ({ ...real.gpuPointerInfo(ids.get(id) ?? 0), ptr: id }),
    freeWebGPU: (id) => {
      real.freeWebGPU(ids.get(id) ?? 0);
      ids.delete(id);
      free.push(id);
    },
  });
}

/** Produce with webdlpack, then change the struct with `edit(view, address, dlTensorAddress)`. */
export function editedProducer(edit, devices) {
  return {
    devices,
    async produce(host, req) {
      const address = await producer.produce(host, req);
      edit(new DataView(host.buffer), address, address + 24, host);
      return address;
    },
  };
}

/** A consumer that reads the struct itself and checks nothing (and calls the deleter `deletes` times). */
export function naiveConsumer({ deletes = 1, requireStrides = false } = {}) {
  return {
    consume(host, address) {
      const v = new DataView(host.buffer);
      const t = address + 24;
      if (requireStrides && v.getUint32(t + 24, true) === 0) throw new Error("strides is NULL");
      const data = v.getUint32(t, true);
      const values = Array.from(new Float32Array(host.buffer, data, 6));
      const deleter = v.getUint32(address + 12, true);
      return {
        values,
        release() {
          for (let i = 0; i < deletes; i++) host.callVoidPointer(deleter, address);
        },
      };
    },
  };
}

/** The real context of the page, and its device 0. */
export const real = () => W.getContext();
export const device = () => real().getWebGPUDevice(0);
