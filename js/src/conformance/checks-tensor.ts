/**
 * Checks of a framework's producer and consumer of DLPack structs in wasm
 * memory (docs/spec.md §4, O1, O2, S1). Structs are read and written at the
 * T1 offsets by the kit itself (probe.ts), not by the codec under test.
 */
import type { WebDLPackContext } from "../context/types.js";
import type { WasmHost } from "../dlpack/wasm-host.js";
import { createTestHost } from "../testing/index.js";
import type { Check, CheckInput } from "./check.js";
import { CheckSkipped, ensure, ensureCode, readRaw, show, writeRaw, type RawManaged } from "./probe.js";
import type { ConformanceTarget, TensorConsumer, TensorProducer, TensorRequest } from "./types.js";

type CountingHost = WasmHost & { readonly liveAllocations: number; readonly liveFunctions: number };

const SHAPE = [2, 3] as const;
const VALUES = [0.5, 1, 2, 3, 4, 5.25] as const;

function host(target: ConformanceTarget): CountingHost {
  return target.makeHost ? target.makeHost() : createTestHost();
}

function needProducer(target: ConformanceTarget, device: "cpu" | "webgpu"): TensorProducer {
  const p = target.producer;
  if (!p) throw new CheckSkipped("no producer given");
  if (p.devices && !p.devices.includes(device)) throw new CheckSkipped(`the producer does not make ${device} tensors`);
  return p;
}

function needConsumer(target: ConformanceTarget): TensorConsumer {
  if (!target.consumer) throw new CheckSkipped("no consumer given");
  return target.consumer;
}

/** Ask the producer for the standard tensor; returns the host, the address and the struct as read. */
async function produced(
  input: CheckInput,
  device: "cpu" | "webgpu",
): Promise<{ h: CountingHost; address: number; raw: RawManaged }> {
  const producer = needProducer(input.target, device);
  if (device === "webgpu") await input.context.setup();
  const h = host(input.target);
  const request: TensorRequest = { device, dtype: "float32", shape: SHAPE, values: VALUES };
  const address = (await producer.produce(h, request)) >>> 0;
  return { h, address, raw: readRaw(h, address) };
}

/** Run the producer's deleter once (a function-table call, as any consumer would). */
function release(h: WasmHost, address: number, raw: RawManaged): void {
  if (raw.deleter !== 0) h.callVoidPointer(raw.deleter, address);
}

/** Bytes the elements of a C-contiguous float32 [2, 3] reach. */
const NBYTES = 4 * VALUES.length;

/** Bytes a float32 tensor's elements reach from data + byte_offset, as its shape and strides say (NULL: C-contiguous). */
function reach(raw: RawManaged): number {
  if (raw.shape.some((n) => n === 0)) return 0;
  let stride = 1;
  let last = 0;
  for (let i = raw.ndim - 1; i >= 0; i--) {
    const s = raw.strides ? raw.strides[i]! : stride;
    last += (raw.shape[i]! - 1) * Math.abs(s);
    stride *= raw.shape[i]!;
  }
  return 4 * (last + 1);
}

async function valuesOf(ctx: WebDLPackContext | undefined, h: WasmHost, raw: RawManaged): Promise<number[]> {
  const start = raw.data + Number(raw.byteOffset);
  if (raw.deviceType === 15) {
    if (!ctx) throw new CheckSkipped("a WebGPU tensor and no context to read it");
    return Array.from(
      new Float32Array(await ctx.readback(raw.data, { byteOffset: Number(raw.byteOffset), byteLength: NBYTES })),
    );
  }
  return Array.from(new Float32Array(h.buffer.slice(start, start + NBYTES)));
}

/** A producer check over both devices it makes (CPU first). */
function producerCheck(
  name: string,
  rules: readonly string[],
  level: "MUST" | "SHOULD",
  body: (input: CheckInput, device: "cpu" | "webgpu", raw: RawManaged, h: CountingHost) => Promise<void> | void,
  devices: readonly ("cpu" | "webgpu")[] = ["cpu", "webgpu"],
): Check {
  return {
    name,
    rules,
    level,
    gpu: false,
    async run(input) {
      let ran = 0;
      for (const device of devices) {
        if (input.target.producer?.devices && !input.target.producer.devices.includes(device)) continue;
        if (device === "webgpu" && (!input.hasGPU || !(input.target.context ?? input.target.getContext))) continue;
        const { h, address, raw } = await produced(input, device);
        try {
          await body(input, device, raw, h);
        } finally {
          release(h, address, raw);
        }
        ran++;
      }
      if (ran === 0)
        throw new CheckSkipped(input.target.producer ? "no device the check applies to" : "no producer given");
    },
  };
}

/** Give the consumer a struct the kit wrote; returns what it did and the deleter count. */
async function consumeRaw(target: ConformanceTarget, spec: Parameters<typeof writeRaw>[1]) {
  const consumer = needConsumer(target);
  const h = host(target);
  const raw = writeRaw(h, spec);
  let error: unknown;
  let values: number[] | undefined;
  try {
    const got = await consumer.consume(h, raw.address);
    values = Array.from(got.values);
    got.release();
  } catch (err) {
    error = err;
  }
  return { error, values, calls: raw.deleterCalls, h };
}

/** A consumer check where the struct is refused with `code`, and the deleter still runs once. */
function refusalCheck(
  name: string,
  rules: readonly string[],
  code: "VERSION_MISMATCH" | "BAD_FLAGS" | "OUT_OF_BOUNDS",
  spec: Omit<Parameters<typeof writeRaw>[1], "shape" | "values">,
  what: string,
): Check {
  return {
    name,
    rules,
    level: "MUST",
    gpu: false,
    async run({ target }) {
      const r = await consumeRaw(target, { shape: SHAPE, values: VALUES, ...spec });
      ensure(r.error !== undefined, `a struct with ${what} must be refused with ${code}, but the consumer took it`);
      ensureCode(r.error, code, `refusing a struct with ${what}`);
      ensure(r.calls === 1, `a refused struct's deleter must run exactly once, ran ${r.calls} times`);
    },
  };
}

export const tensorChecks: readonly Check[] = [
  producerCheck("dlpack.layout", ["T1"], "MUST", (_i, device, raw, h) => {
    ensure(raw.ndim === 2, `${device}: ndim at offset 36 must be 2, got ${raw.ndim}`);
    ensure(
      raw.shapePtr !== 0 && raw.shape.join() === "2,3",
      `${device}: shape at offset 44 must point at [2, 3], got ${show(raw.shapePtr)} -> [${raw.shape.join(", ")}]`,
    );
    ensure(
      raw.dtype.code === 2 && raw.dtype.bits === 32 && raw.dtype.lanes === 1,
      `${device}: dtype at offset 40 must be float32 {2, 32, 1}, got {${raw.dtype.code}, ${raw.dtype.bits}, ${raw.dtype.lanes}}`,
    );
    ensure(raw.deleter !== 0, `${device}: the deleter at offset 12 must be a function-table index`);
    ensure(
      raw.data !== 0 && raw.data < (device === "cpu" ? h.buffer.byteLength : 2 ** 32),
      `${device}: data at offset 24 is ${show(raw.data)}`,
    );
  }),
  producerCheck("producer.version", ["T2"], "MUST", (_i, device, raw) => {
    ensure(raw.major === 1, `${device}: version.major must be 1, got ${raw.major}.${raw.minor}`);
  }),
  producerCheck("producer.strides", ["T3"], "MUST", (_i, device, raw) => {
    ensure(raw.stridesPtr !== 0, `${device}: strides must not be NULL for ndim 2 (DLPack 1.2)`);
    ensure(
      raw.strides?.join() === "3,1",
      `${device}: strides of a C-contiguous [2, 3] must be [3, 1], got [${raw.strides?.join(", ")}]`,
    );
  }),
  producerCheck("producer.device", ["T5", "C3"], "MUST", (input, device, raw) => {
    if (device === "cpu") {
      ensure(
        raw.deviceType === 1 && raw.deviceId === 0,
        `cpu: device must be {kDLCPU 1, 0}, got {${raw.deviceType}, ${raw.deviceId}}`,
      );
    } else {
      ensure(raw.deviceType === 15, `webgpu: device_type must be kDLWebGPU 15, got ${raw.deviceType}`);
      ensure(
        input.context.getWebGPUDevice(raw.deviceId) !== undefined,
        `webgpu: device_id ${raw.deviceId} is no device of the context`,
      );
    }
  }),
  producerCheck("producer.bounds", ["T6"], "MUST", (input, device, raw, h) => {
    const end = Number(raw.byteOffset) + reach(raw);
    if (device === "cpu") {
      ensure(
        raw.data + end <= h.buffer.byteLength,
        `cpu: elements end at ${raw.data + end}, past memory (${h.buffer.byteLength} bytes)`,
      );
    } else {
      const info = input.context.gpuPointerInfo(raw.data);
      ensure(
        info.deviceId === raw.deviceId,
        `webgpu: the pointer is on device ${info.deviceId}, the struct says ${raw.deviceId}`,
      );
      ensure(end <= info.size, `webgpu: elements end at byte ${end} of a ${info.size}-byte buffer`);
    }
  }),
  producerCheck(
    "producer.cpu-alignment",
    ["T7"],
    "SHOULD",
    (_i, _d, raw) => {
      const address = raw.data + Number(raw.byteOffset);
      ensure(address % 4 === 0, `cpu: data ${show(address)} is not even aligned to float32's 4 bytes (MUST)`);
      ensure(address % 64 === 0, `cpu: data ${show(address)} is not 64-byte aligned`);
    },
    ["cpu"],
  ),
  producerCheck("producer.values", ["T8"], "MUST", async (input, device, raw, h) => {
    const got = await valuesOf(device === "webgpu" ? input.context : undefined, h, raw);
    ensure(got.join() === VALUES.join(), `${device}: read [${got.join(", ")}], want [${VALUES.join(", ")}]`);
  }),
  {
    name: "producer.deleter-frees",
    rules: ["O2"],
    level: "MUST",
    gpu: false,
    async run(input) {
      const h = host(input.target);
      const before = { allocations: h.liveAllocations, functions: h.liveFunctions };
      const producer = needProducer(input.target, "cpu");
      const address =
        (await producer.produce(h, { device: "cpu", dtype: "float32", shape: SHAPE, values: VALUES })) >>> 0;
      const raw = readRaw(h, address);
      ensure(raw.deleter !== 0, "the struct has no deleter");
      h.callVoidPointer(raw.deleter, address);
      ensure(
        h.liveAllocations === before.allocations,
        `after the deleter ${h.liveAllocations - before.allocations} of the producer's allocations are still live in the memory`,
      );
    },
  },
  {
    name: "ordering.handoff",
    rules: ["S1"],
    level: "MUST",
    gpu: true,
    async run(input) {
      needProducer(input.target, "webgpu");
      const { h, address, raw } = await produced(input, "webgpu");
      try {
        const got = await valuesOf(input.context, h, raw);
        ensure(
          got.join() === VALUES.join(),
          `work submitted right after the hand-off read [${got.join(", ")}], want [${VALUES.join(", ")}] (the producer's writes were not submitted first)`,
        );
      } finally {
        release(h, address, raw);
      }
    },
  },
  {
    name: "consumer.values",
    rules: ["T8"],
    level: "MUST",
    gpu: false,
    async run({ target }) {
      const r = await consumeRaw(target, { shape: SHAPE, values: VALUES });
      if (r.error !== undefined) throw r.error;
      ensure(
        r.values?.join() === VALUES.join(),
        `the consumer read [${r.values?.join(", ")}], want [${VALUES.join(", ")}]`,
      );
    },
  },
  {
    name: "consumer.deleter-once",
    rules: ["O1"],
    level: "MUST",
    gpu: false,
    async run({ target }) {
      const r = await consumeRaw(target, { shape: SHAPE, values: VALUES });
      if (r.error !== undefined) throw r.error;
      ensure(r.calls === 1, `after release() the deleter must have run exactly once, ran ${r.calls} times`);
    },
  },
  {
    name: "consumer.null-strides",
    rules: ["T3"],
    level: "MUST",
    gpu: false,
    async run({ target }) {
      const r = await consumeRaw(target, { shape: SHAPE, values: VALUES, strides: false });
      if (r.error !== undefined) throw r.error;
      ensure(
        r.values?.join() === VALUES.join(),
        `NULL strides read as C-contiguous must give [${VALUES.join(", ")}], got [${r.values?.join(", ")}]`,
      );
      ensure(r.calls === 1, `the deleter ran ${r.calls} times`);
    },
  },
  refusalCheck("consumer.other-major", ["T2"], "VERSION_MISMATCH", { major: 2 }, "version.major 2"),
  refusalCheck("consumer.bad-flags", ["T4"], "BAD_FLAGS", { flags: 8n }, "flag bit 3"),
  refusalCheck("consumer.out-of-bounds", ["T6"], "OUT_OF_BOUNDS", { pastEnd: true }, "elements past the end of memory"),
];
