/**
 * Checks of the context (docs/spec.md §2, S2, E1), with the pointer checks
 * (checks-pointers.ts, §3) in between. They run against a set-up context;
 * what they allocate they free.
 */
import { missingContextMembers } from "../context/get-context.js";
import { ErrorCode } from "../errors.js";
import type { Check } from "./check.js";
import { pointerChecks } from "./checks-pointers.js";
import { alloc, extraDevice } from "./context-probes.js";
import { ensure, ensureCode, expectCode, show } from "./probe.js";

export const contextChecks: readonly Check[] = [
  {
    name: "context.members",
    rules: ["C1"],
    level: "MUST",
    gpu: false,
    run({ context }) {
      const minor = context.protocol?.minor;
      ensure(Number.isInteger(minor), `context.protocol.minor must be an integer, got ${show(minor)}`);
      const missing = missingContextMembers(context, minor);
      ensure(missing.length === 0, `a protocol ${context.protocol.major}.${minor} context lacks ${missing.join(", ")}`);
    },
  },
  {
    name: "context.setup",
    rules: ["C2"],
    level: "MUST",
    gpu: true,
    async run({ context }) {
      const [a, b] = await Promise.all([context.setup(), context.setup()]);
      ensure(a.id === 0 && b.id === 0, `setup() must resolve with id 0, got ${show(a.id)} and ${show(b.id)}`);
      const device = context.getWebGPUDevice(0);
      const again = await context.setup();
      ensure(again.id === 0 && context.getWebGPUDevice(0) === device, "a repeated setup() must keep device 0");
      ensure(Array.isArray(a.features) && typeof a.limits === "object", "setup() must report features and limits");
    },
  },
  {
    name: "context.device-ids",
    rules: ["C3"],
    level: "MUST",
    gpu: true,
    async run({ context, gpu }) {
      const { device, id } = await extraDevice(context, gpu);
      try {
        ensure(Number.isInteger(id) && id > 0, `registerWebGPUDevice must return an id > 0, got ${show(id)}`);
        ensure(context.registerWebGPUDevice(device) === id, "the same device must get the same id");
        ensure(context.getWebGPUDevice(id) === device, `getWebGPUDevice(${id}) must return the registered device`);
        await expectCode(() => context.getWebGPUDevice(id + 1000), "UNKNOWN_DEVICE", `getWebGPUDevice(${id + 1000})`);
      } finally {
        context.unregisterWebGPUDevice(id);
        device.destroy();
      }
      await expectCode(() => context.getWebGPUDevice(id), "UNKNOWN_DEVICE", `getWebGPUDevice(${id}) after unregister`);
    },
  },
  ...pointerChecks,
  {
    name: "ordering.readback",
    rules: ["S2", "C4"],
    level: "MUST",
    gpu: true,
    async run({ context }) {
      const device = context.getWebGPUDevice(0);
      const src = alloc(context, 16);
      const dst = alloc(context, 16);
      try {
        device.queue.writeBuffer(context.gpuPointerToBuffer(src), 0, new Float32Array([1, 2, 3, 4]));
        const enc = device.createCommandEncoder();
        enc.copyBufferToBuffer(context.gpuPointerToBuffer(src), 0, context.gpuPointerToBuffer(dst), 0, 16);
        device.queue.submit([enc.finish()]);
        const got = Array.from(new Float32Array(await context.readback(dst, { byteOffset: 0, byteLength: 16 })));
        ensure(
          got.join() === "1,2,3,4",
          `readback right after a submitted copy gave [${got.join(", ")}], want [1, 2, 3, 4]`,
        );
      } finally {
        context.freeWebGPU(src);
        context.freeWebGPU(dst);
      }
    },
  },
  {
    name: "errors.shape",
    rules: ["E1"],
    level: "MUST",
    gpu: false,
    run({ context }) {
      let caught: unknown;
      try {
        context.gpuPointerToBuffer(-1);
      } catch (err) {
        caught = err;
      }
      ensure(caught instanceof Error, `a failing call must throw an Error, got ${show(caught)}`);
      const e = caught as Error & { code?: string; errno?: number; field?: unknown };
      ensure(
        typeof e.code === "string" && e.code in ErrorCode,
        `err.code ${show(e.code)} is not a code of the shared table`,
      );
      ensureCode(e, e.code as keyof typeof ErrorCode, "the error of gpuPointerToBuffer(-1)");
      ensure(typeof e.field === "string" && e.field.length > 0, "the error must name a field");
      ensure(
        (e as unknown as Record<symbol, unknown>)[Symbol.for("webdlpack.error")] === true,
        'the error must carry the brand Symbol.for("webdlpack.error") (instanceof WebDLPackError across copies)',
      );
    },
  },
];
