// Page-side code of tests/browser/conformance.spec.ts: runs webdlpack/conformance against
// webdlpack itself (with its producer and consumer), then against deliberately broken
// contexts, getContext functions, producers and consumers — at least one per check — each
// run with `only` that check, so the spec can assert that every check can fail.
import * as W from "/js/dist/index.js";
import { CHECK_NAMES, runConformance } from "/js/dist/conformance/index.js";
import { PageContext } from "/js/dist/context/context.js";

const KEY = Symbol.for("webdlpack.context");
const STORAGE = 0x80,
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
function broken(overrides) {
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
function naiveTable() {
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
function editedProducer(edit, devices) {
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
function naiveConsumer({ deletes = 1, requireStrides = false } = {}) {
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

/** Runs with the global record put back afterwards, whatever the variant did to it. */
async function withSavedRecord(fn) {
  const saved = Object.getOwnPropertyDescriptor(globalThis, KEY);
  try {
    return await fn();
  } finally {
    if (saved) Object.defineProperty(globalThis, KEY, saved);
    else delete globalThis[KEY];
  }
}

/** Each variant breaks one rule; `check` is the check that must catch it. */
export function variants() {
  const real = () => W.getContext();
  const device = () => real().getWebGPUDevice(0);
  return [
    {
      check: "global.record",
      name: "record stored enumerable and unfrozen",
      target: () => ({
        getContext() {
          const rec = globalThis[KEY];
          Object.defineProperty(globalThis, KEY, {
            value: { ...rec },
            enumerable: true,
            configurable: true,
            writable: true,
          });
          return rec.context;
        },
      }),
    },
    {
      check: "global.singleton",
      name: "a new context per call",
      target: () => ({ getContext: () => ({ protocol: { major: 1, minor: 2 } }) }),
    },
    {
      check: "global.major-mismatch",
      name: "majors not compared",
      target: () => ({ getContext: () => globalThis[KEY]?.context ?? real() }),
    },
    {
      check: "global.older-minor",
      name: "older minor used without a member check",
      target: () => ({
        getContext() {
          const r = globalThis[KEY];
          return r?.protocol?.major === 1 ? r.context : real();
        },
      }),
    },
    {
      check: "global.malformed",
      name: "a malformed value overwritten",
      target: () => ({
        getContext() {
          const r = globalThis[KEY];
          if (
            !r ||
            typeof r !== "object" ||
            typeof r.protocol !== "object" ||
            typeof r.context !== "object" ||
            !r.context
          )
            delete globalThis[KEY];
          return real();
        },
      }),
    },
    {
      check: "context.members",
      name: "a 1.2 context without allocWebGPUChecked",
      target: () => ({ context: broken({ allocWebGPUChecked: undefined }) }),
    },
    {
      check: "context.setup",
      name: "setup reports id 1",
      target: () => ({ context: broken({ setup: async () => ({ id: 1, features: [], limits: {} }) }) }),
    },
    {
      check: "context.device-ids",
      name: "every registered device gets a new id",
      target: () => {
        let n = 100;
        const ids = new Map();
        return {
          context: broken({
            registerWebGPUDevice: (d) => {
              const id = ++n;
              ids.set(id, real().registerWebGPUDevice(d));
              return id;
            },
            getWebGPUDevice: (id, o) => real().getWebGPUDevice(ids.get(id) ?? id, o),
            unregisterWebGPUDevice: (id) => {
              if (ids.has(id)) {
                real().unregisterWebGPUDevice(ids.get(id));
                ids.delete(id);
              }
            },
          }),
        };
      },
    },
    {
      check: "pointer.sync-alloc",
      name: "allocWebGPU returns a Promise (protocol 1.1's API)",
      target: () => ({ context: broken({ allocWebGPU: (n, o) => real().allocWebGPUChecked(n, o) }) }),
    },
    {
      check: "pointer.checked-alloc",
      name: "allocWebGPUChecked returns a plain pointer",
      target: () => ({ context: broken({ allocWebGPUChecked: (n, o) => real().allocWebGPU(n, o) }) }),
    },
    {
      check: "pointer.u32",
      name: "pointers as signed int32",
      target: () => ({
        context: broken({
          allocWebGPU: (n, o) => real().allocWebGPU(n, o) - 2 ** 32,
          gpuPointerToBuffer: (p) => real().gpuPointerToBuffer(p >>> 0),
          freeWebGPU: (p) => real().freeWebGPU(p >>> 0),
        }),
      }),
    },
    {
      check: "pointer.translate",
      name: "translation gives a new 16-byte buffer",
      target: () => ({
        context: broken({
          gpuPointerToBuffer: (p) => {
            real().gpuPointerToBuffer(p);
            return device().createBuffer({ size: 16, usage: STORAGE });
          },
        }),
      }),
    },
    { check: "pointer.no-reuse", name: "a naive table reusing freed ids", target: () => ({ context: naiveTable() }) },
    {
      check: "pointer.stale",
      name: "freed pointers translate to undefined",
      target: () => ({
        context: broken({
          gpuPointerToBuffer: (p) => {
            try {
              return real().gpuPointerToBuffer(p);
            } catch {
              return undefined;
            }
          },
          gpuPointerInfo: (p) => {
            try {
              return real().gpuPointerInfo(p);
            } catch {
              return undefined;
            }
          },
        }),
      }),
    },
    {
      check: "pointer.double-free",
      name: "a second free is ignored",
      target: () => ({
        context: broken({
          freeWebGPU: (p) => {
            try {
              real().freeWebGPU(p);
            } catch {
              /* ignored */
            }
          },
        }),
      }),
    },
    {
      check: "pointer.invalid",
      name: "pointer 0 translates to null",
      target: () => ({
        context: broken({
          gpuPointerToBuffer: (p) => (p === 0 ? null : real().gpuPointerToBuffer(p)),
        }),
      }),
    },
    {
      check: "pointer.foreign",
      name: "two naive tables issue the same ids",
      target: () => ({ context: naiveTable(), otherContext: naiveTable() }),
    },
    {
      check: "pointer.register",
      name: "freeing an adopted buffer destroys it",
      target: () => ({
        context: broken({
          freeWebGPU: (p) => {
            const b = real().gpuPointerToBuffer(p);
            real().freeWebGPU(p);
            b.destroy();
          },
        }),
      }),
    },
    {
      check: "pointer.register-foreign",
      name: "readback copies without checking whose buffer it is (WebGPU drops the copy: zeros)",
      target: () => ({
        context: broken({
          readback: async (p, range) => {
            const buffer = real().gpuPointerToBuffer(p);
            const device = real().getWebGPUDevice(0);
            const staging = device.createBuffer({
              size: buffer.size,
              usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
            });
            const encoder = device.createCommandEncoder();
            encoder.copyBufferToBuffer(buffer, 0, staging, 0, buffer.size);
            device.queue.submit([encoder.finish()]);
            await staging.mapAsync(GPUMapMode.READ);
            const bytes = staging.getMappedRange().slice(range?.byteOffset ?? 0);
            staging.destroy();
            return bytes;
          },
        }),
      }),
    },
    {
      check: "pointer.info",
      name: "info without requestedSize",
      target: () => ({
        context: broken({
          gpuPointerInfo: (p) => ({ ...real().gpuPointerInfo(p), requestedSize: undefined }),
        }),
      }),
    },
    {
      check: "pointer.device-lost",
      name: "a lost device's pointer still translates",
      target: () => ({
        context: broken({
          gpuPointerToBuffer: (p) => {
            try {
              return real().gpuPointerToBuffer(p);
            } catch (e) {
              if (e.code === "DEVICE_LOST") return {};
              throw e;
            }
          },
        }),
      }),
    },
    {
      check: "ordering.readback",
      name: "readback answers zeros at once",
      target: () => ({
        context: broken({
          readback: async (p, r) => new ArrayBuffer(r?.byteLength ?? 16),
        }),
      }),
    },
    {
      check: "errors.shape",
      name: "plain Errors without codes",
      target: () => ({
        context: broken({
          gpuPointerToBuffer: () => {
            throw new Error("bad pointer");
          },
        }),
      }),
    },
    {
      check: "dlpack.layout",
      name: "a legacy DLManagedTensor (no version) handed over",
      target: () => ({
        producer: {
          devices: ["cpu"],
          produce(host, req) {
            const t = W.Tensor.fromTypedArray(new Float32Array(req.values), { shape: req.shape, dtype: "float32" });
            const address = t.toManaged(host, { versioned: false });
            t.dispose();
            return address;
          },
        },
      }),
    },
    {
      check: "producer.version",
      name: "version.major 0",
      target: () => ({ producer: editedProducer((v, a) => v.setUint32(a, 0, true)) }),
    },
    {
      check: "producer.strides",
      name: "NULL strides",
      target: () => ({ producer: editedProducer((v, a, t) => v.setUint32(t + 24, 0, true)) }),
    },
    {
      check: "producer.device",
      name: "device_type kDLCUDA",
      target: () => ({ producer: editedProducer((v, a, t) => v.setInt32(t + 4, 2, true)) }),
    },
    {
      check: "producer.bounds",
      name: "shape larger than the data",
      target: () => ({
        producer: editedProducer((v, a, t) => {
          v.setBigInt64(v.getUint32(t + 20, true), 100_000_000n, true);
        }),
      }),
    },
    {
      check: "producer.cpu-alignment",
      name: "data 4 bytes past a 64-byte boundary",
      target: () => ({
        producer: editedProducer(
          (v, a, t) => {
            v.setUint32(t, v.getUint32(t, true) + 4, true);
          },
          ["cpu"],
        ),
      }),
    },
    {
      check: "producer.values",
      name: "the first value changed",
      target: () => ({
        producer: editedProducer(
          (v, a, t) => {
            v.setFloat32(v.getUint32(t, true), 99, true);
          },
          ["cpu"],
        ),
      }),
    },
    {
      check: "producer.deleter-frees",
      name: "a deleter that frees nothing",
      target: () => ({
        producer: editedProducer(
          (v, a, t, host) => {
            v.setUint32(
              a + 12,
              host.addFunction(() => undefined),
              true,
            );
          },
          ["cpu"],
        ),
      }),
    },
    {
      check: "ordering.handoff",
      name: "writes recorded but submitted 300 ms later",
      target: () => ({
        getContext: W.getContext,
        producer: {
          devices: ["webgpu"],
          produce(host, req) {
            const ctx = real();
            const dev = device();
            const buffer = dev.createBuffer({ size: 64, usage: STORAGE | COPY_SRC | COPY_DST });
            const staging = dev.createBuffer({ size: 64, usage: COPY_SRC, mappedAtCreation: true });
            new Float32Array(staging.getMappedRange()).set(req.values);
            staging.unmap();
            const enc = dev.createCommandEncoder();
            enc.copyBufferToBuffer(staging, 0, buffer, 0, 64);
            setTimeout(() => dev.queue.submit([enc.finish()]), 300);
            const p = ctx.registerGPUBuffer(buffer, { owned: true });
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
        },
      }),
    },
    {
      check: "consumer.values",
      name: "values read backwards",
      target: () => ({
        consumer: {
          consume(host, a) {
            const r = consumer.consume(host, a);
            return { values: Array.from(r.values).reverse(), release: r.release };
          },
        },
      }),
    },
    {
      check: "consumer.deleter-once",
      name: "the deleter never called",
      target: () => ({ consumer: naiveConsumer({ deletes: 0 }) }),
    },
    {
      check: "consumer.deleter-once",
      name: "the deleter called twice",
      target: () => ({ consumer: naiveConsumer({ deletes: 2 }) }),
    },
    {
      check: "consumer.null-strides",
      name: "NULL strides refused",
      target: () => ({ consumer: naiveConsumer({ requireStrides: true }) }),
    },
    { check: "consumer.other-major", name: "the version not read", target: () => ({ consumer: naiveConsumer() }) },
    {
      check: "consumer.other-major",
      name: "refused without calling the deleter",
      target: () => ({
        consumer: {
          consume() {
            throw new W.WebDLPackError("VERSION_MISMATCH", "major 2", { field: "version.major" });
          },
        },
      }),
    },
    { check: "consumer.bad-flags", name: "the flags not read", target: () => ({ consumer: naiveConsumer() }) },
    { check: "consumer.out-of-bounds", name: "no bounds check", target: () => ({ consumer: naiveConsumer() }) },
  ];
}

/** webdlpack's own report, then one result per broken variant (status of its check). */
export async function runAll() {
  const lines = [];
  // A second, independent context of this realm (as a Worker's would be): its pointers carry another tag.
  const otherContext = new PageContext(W.CONTEXT_PROTOCOL);
  const own = await runConformance({
    getContext: W.getContext,
    otherContext,
    producer,
    consumer,
    print: (l) => lines.push(l),
  });
  const broken = [];
  for (const v of variants()) {
    const report = await withSavedRecord(async () => runConformance({ ...v.target(), only: [v.check], print: false }));
    const r = report.results.find((x) => x.check === v.check);
    broken.push({ check: v.check, name: v.name, status: r?.status ?? "missing", detail: r?.detail ?? "" });
  }
  return {
    own: own.results.map((r) => ({ check: r.check, status: r.status, detail: r.detail })),
    lines,
    broken,
    checkNames: [...CHECK_NAMES],
  };
}
