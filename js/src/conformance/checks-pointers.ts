/**
 * Checks of GPU pointers (docs/spec.md §3: P1–P11). They run against a set-up
 * context; what they allocate they free.
 */
import type { Check } from "./check.js";
import { alloc, COPY_DST, COPY_SRC, extraDevice, isThenable, isU32Pointer, OWNER, STORAGE } from "./context-probes.js";
import { CheckSkipped, ensure, expectCode, expectSyncCode, show } from "./probe.js";

export const pointerChecks: readonly Check[] = [
  {
    name: "pointer.sync-alloc",
    rules: ["P1"],
    level: "MUST",
    gpu: true,
    run({ context }) {
      const p = alloc(context, 64);
      try {
        ensure(context.gpuPointerToBuffer(p).size >= 64, "the pointer allocWebGPU returned must translate at once");
      } finally {
        context.freeWebGPU(p);
      }
      expectSyncCode(() => context.allocWebGPU(-1), "INVALID_ARGUMENT", "allocWebGPU(-1)");
      expectSyncCode(
        () => context.allocWebGPU(16, { usage: 1 << 30 }),
        "INVALID_ARGUMENT",
        "allocWebGPU(16, {usage: 1 << 30})",
      );
      expectSyncCode(
        () => context.allocWebGPU(16, { deviceId: 4096 }),
        "UNKNOWN_DEVICE",
        "allocWebGPU(16, {deviceId: 4096})",
      );
      const q: unknown = context.allocWebGPUSync(32, { owner: OWNER });
      ensure(isU32Pointer(q), `allocWebGPUSync (the 1.1 name) must return a pointer too, got ${show(q)}`);
      context.freeWebGPU(q);
    },
  },
  {
    name: "pointer.checked-alloc",
    rules: ["P2"],
    level: "MUST",
    gpu: true,
    async run({ context }) {
      const pending: unknown = context.allocWebGPUChecked(64, { owner: OWNER });
      ensure(isThenable(pending), `allocWebGPUChecked must return a Promise, got ${show(pending)}`);
      const p = await (pending as Promise<unknown>);
      ensure(isU32Pointer(p), `allocWebGPUChecked must resolve with a u32 pointer, got ${show(p)}`);
      ensure(context.gpuPointerToBuffer(p).size >= 64, "its pointer must translate");
      context.freeWebGPU(p);
      await expectCode(() => context.allocWebGPUChecked(-1), "INVALID_ARGUMENT", "allocWebGPUChecked(-1)");
      const limit = context.getWebGPUDevice(0).limits.maxBufferSize;
      await expectCode(
        () => context.allocWebGPUChecked(limit + 16),
        "INVALID_ARGUMENT",
        `allocWebGPUChecked(maxBufferSize + 16)`,
      );
    },
  },
  {
    name: "pointer.u32",
    rules: ["P3"],
    level: "MUST",
    gpu: true,
    run({ context }) {
      const ptrs = Array.from({ length: 16 }, (_, i) => alloc(context, 16 * (i + 1)));
      try {
        for (const p of ptrs) {
          ensure(isU32Pointer(p), `pointer ${show(p)} is not in [1, 2^32)`);
          // Bit 31 set (webdlpack: tags 8..15): the same bits read as a signed int32 are not a pointer (P3, P7).
          if ((p | 0) !== p)
            expectSyncCode(
              () => context.gpuPointerToBuffer(p | 0),
              "INVALID_POINTER",
              `pointer ${show(p)} read as signed (${p | 0})`,
            );
        }
      } finally {
        for (const p of ptrs) context.freeWebGPU(p);
      }
    },
  },
  {
    name: "pointer.translate",
    rules: ["P4"],
    level: "MUST",
    gpu: true,
    run({ context }) {
      const p = alloc(context, 100, { usage: STORAGE | COPY_SRC });
      const q = alloc(context, 16);
      try {
        const b = context.gpuPointerToBuffer(p);
        ensure(
          b && typeof b.size === "number" && b.size >= 100,
          `the buffer of a 100-byte allocation has size ${show(b?.size)}`,
        );
        ensure(
          (b.usage & (STORAGE | COPY_SRC)) === (STORAGE | COPY_SRC),
          `the buffer's usage ${show(b.usage)} lacks the requested STORAGE | COPY_SRC`,
        );
        ensure(context.gpuPointerToBuffer(p) === b, "translating twice must give the same GPUBuffer");
        const d = context.gpuPointerToBuffer(q).usage;
        ensure(
          (d & (STORAGE | COPY_SRC | COPY_DST)) === (STORAGE | COPY_SRC | COPY_DST),
          `default usage ${show(d)} lacks STORAGE | COPY_SRC | COPY_DST`,
        );
        ensure(context.gpuPointerToBuffer(q) !== b, "two live pointers must name two buffers");
      } finally {
        context.freeWebGPU(p);
        context.freeWebGPU(q);
      }
    },
  },
  {
    name: "pointer.no-reuse",
    rules: ["P5"],
    level: "MUST",
    gpu: true,
    run({ context }) {
      const seen = new Set<number>();
      for (let i = 0; i < 300; i++) {
        const p = alloc(context, 64);
        ensure(!seen.has(p), `pointer ${show(p)} was issued again after it was freed (allocation ${i})`);
        seen.add(p);
        context.freeWebGPU(p);
      }
    },
  },
  {
    name: "pointer.stale",
    rules: ["P6"],
    level: "MUST",
    gpu: true,
    async run({ context }) {
      const p = alloc(context, 64);
      context.freeWebGPU(p);
      await expectCode(
        () => context.gpuPointerToBuffer(p),
        "STALE_POINTER",
        "gpuPointerToBuffer of a freed pointer",
        "ptr",
      );
      await expectCode(() => context.gpuPointerInfo(p), "STALE_POINTER", "gpuPointerInfo of a freed pointer");
    },
  },
  {
    name: "pointer.double-free",
    rules: ["P6"],
    level: "MUST",
    gpu: true,
    async run({ context }) {
      const p = alloc(context, 64);
      context.freeWebGPU(p);
      await expectCode(() => context.freeWebGPU(p), "DOUBLE_FREE", "freeWebGPU twice", "ptr");
    },
  },
  {
    name: "pointer.invalid",
    rules: ["P7"],
    level: "MUST",
    gpu: true,
    async run({ context }) {
      for (const bad of [0, -5, 2 ** 32, 2 ** 40, 1.5, Number.NaN]) {
        await expectCode(() => context.gpuPointerToBuffer(bad), "INVALID_POINTER", `gpuPointerToBuffer(${bad})`);
        await expectCode(() => context.freeWebGPU(bad), "INVALID_POINTER", `freeWebGPU(${bad})`);
      }
    },
  },
  {
    name: "pointer.foreign",
    rules: ["P7"],
    level: "MUST",
    gpu: true,
    async run({ context, target }) {
      const other = target.otherContext;
      if (!other) throw new CheckSkipped("no otherContext given");
      await other.setup();
      const mine = alloc(context, 64);
      const theirs = alloc(other, 64);
      try {
        ensure(mine !== theirs, `two contexts issued the same pointer value ${show(mine)}`);
        await expectCode(
          () => context.gpuPointerToBuffer(theirs),
          "INVALID_POINTER",
          "gpuPointerToBuffer of another context's pointer",
        );
      } finally {
        context.freeWebGPU(mine);
        other.freeWebGPU(theirs);
      }
    },
  },
  {
    name: "pointer.register",
    rules: ["P8"],
    level: "MUST",
    gpu: true,
    async run({ context }) {
      const device = context.getWebGPUDevice(0);
      const buffer = device.createBuffer({ size: 64, usage: STORAGE | COPY_SRC | COPY_DST });
      let released = 0;
      const p = context.registerGPUBuffer(buffer, {
        owner: OWNER,
        onRelease: () => {
          released++;
        },
      });
      try {
        ensure(isU32Pointer(p), `registerGPUBuffer must return a u32 pointer, got ${show(p)}`);
        ensure(context.gpuPointerToBuffer(p) === buffer, "a registered pointer must translate to the very buffer");
        await expectCode(() => context.registerGPUBuffer(buffer), "INVALID_ARGUMENT", "registering a buffer twice");
        context.freeWebGPU(p);
        ensure(released === 1, `onRelease must run once when the pointer is freed, ran ${released} times`);
        device.pushErrorScope("validation");
        device.queue.writeBuffer(buffer, 0, new Uint8Array(16));
        const error = await device.popErrorScope();
        ensure(
          error === null,
          `freeing an unowned pointer must not destroy the buffer (writeBuffer: ${error?.message})`,
        );
      } finally {
        buffer.destroy();
      }
    },
  },
  {
    name: "pointer.register-foreign",
    rules: ["P11"],
    level: "MUST",
    gpu: true,
    async run({ context, gpu }) {
      const adapter = await gpu.requestAdapter();
      if (!adapter) throw new CheckSkipped("no adapter for a second GPUDevice");
      const other = await adapter.requestDevice({ label: "conformance: another device" });
      try {
        for (const usage of [STORAGE | COPY_SRC | COPY_DST, STORAGE | COPY_SRC]) {
          const foreign = other.createBuffer({ size: 16, usage, mappedAtCreation: true });
          new Uint32Array(foreign.getMappedRange()).fill(7);
          foreign.unmap();
          const p = context.registerGPUBuffer(foreign, { owner: OWNER });
          try {
            // Read at once: the verdict may still be on its way, and the bytes must not come back anyway.
            await expectCode(
              () => context.readback(p),
              "BAD_DEVICE",
              `readback of another GPUDevice's buffer (usage ${usage})`,
            );
            await expectCode(() => context.gpuPointerToBuffer(p), "BAD_DEVICE", "translating it once refused");
          } finally {
            context.freeWebGPU(p);
            foreign.destroy();
          }
        }
      } finally {
        other.destroy();
      }
    },
  },
  {
    name: "pointer.info",
    rules: ["P9"],
    level: "MUST",
    gpu: true,
    run({ context }) {
      const p = alloc(context, 40);
      try {
        const info = context.gpuPointerInfo(p);
        ensure(info.ptr === p, `info.ptr ${show(info.ptr)} must be the pointer ${show(p)}`);
        ensure(info.deviceId === 0, `info.deviceId must be 0, got ${show(info.deviceId)}`);
        ensure(
          info.requestedSize === 40 && info.size >= 40,
          `info sizes: requestedSize ${show(info.requestedSize)} (want 40), size ${show(info.size)} (want >= 40)`,
        );
        ensure(
          typeof info.usage === "number" && info.owned === true && info.deviceLost === false,
          `info.usage/owned/deviceLost: ${show(info.usage)}/${show(info.owned)}/${show(info.deviceLost)}`,
        );
      } finally {
        context.freeWebGPU(p);
      }
    },
  },
  {
    name: "pointer.device-lost",
    rules: ["P10"],
    level: "MUST",
    gpu: true,
    async run({ context, gpu }) {
      const { device, id } = await extraDevice(context, gpu);
      const p = alloc(context, 64, { deviceId: id });
      device.destroy();
      await device.lost;
      try {
        await expectCode(() => context.gpuPointerToBuffer(p), "DEVICE_LOST", "gpuPointerToBuffer on a lost device");
      } finally {
        context.freeWebGPU(p);
        context.unregisterWebGPUDevice(id);
      }
    },
  },
];
