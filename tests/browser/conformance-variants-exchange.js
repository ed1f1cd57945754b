// The conformance variants that break a rule of the exchange itself (tests/browser/conformance-variants.js runs
// them): the struct's layout, a producer's version, strides, device, bounds, alignment, values and deleter, the
// order of GPU writes before a hand-off, and a consumer's values, deleter calls, strides, version, flags and bounds.
import * as W from "/js/dist/index.js";
import {
  COPY_DST,
  COPY_SRC,
  consumer,
  device,
  editedProducer,
  naiveConsumer,
  producer,
  real,
  STORAGE,
} from "./conformance-subjects.js";

/** Each variant breaks one rule of the exchange; `check` is the check that must catch it. */
export function exchangeVariants() {
  return [
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
