// The conformance variants that break a context rule (tests/browser/conformance-variants.js runs them): the global
// record, the context's members and setup, device ids, pointers (sync/checked allocation, u32, translation, reuse,
// stale, double free, foreign, registered buffers, info, lost devices), readback order and the shape of errors.
import { broken, device, KEY, naiveTable, real, STORAGE } from "./conformance-subjects.js";

/** Each variant breaks one context rule; `check` is the check that must catch it. */
export function contextVariants() {
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
  ];
}
