/**
 * webdlpack/conformance from node:test (no WebGPU in Node: the GPU checks are skipped,
 * saying so): webdlpack's getContext, its Tensor producer and consumer pass every check
 * that runs; broken ones fail the check their rule names. The browser spec
 * (tests/browser/conformance.spec.ts) runs every check with WebGPU.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  CHECK_NAMES,
  formatReport,
  runConformance,
  type ConformanceTarget,
  type TensorConsumer,
  type TensorProducer,
} from "../../js/src/conformance/index.js";
import { getContext } from "../../js/src/context/index.js";
import type { WasmHost } from "../../js/src/dlpack/wasm-host.js";
import { WebDLPackError } from "../../js/src/errors.js";
import { Tensor } from "../../js/src/tensor/index.js";

const producer: TensorProducer = {
  devices: ["cpu"],
  produce(host, req) {
    const t = Tensor.fromTypedArray(new Float32Array(req.values), { shape: [...req.shape], dtype: "float32" });
    const address = t.toManaged(host);
    t.dispose();
    return address;
  },
};
const consumer: TensorConsumer = {
  consume(host, address) {
    const t = Tensor.fromManaged(host, address, { versioned: true });
    return { values: Array.from(t.view as Float32Array), release: () => t.dispose() };
  },
};

async function statusOf(target: ConformanceTarget, check: string): Promise<string> {
  const saved = Object.getOwnPropertyDescriptor(globalThis, Symbol.for("webdlpack.context"));
  try {
    const report = await runConformance({ ...target, only: [check], print: false });
    const r = report.results.find((x) => x.check === check);
    assert.ok(r, `${check} did not run`);
    return r.status;
  } finally {
    if (saved) Object.defineProperty(globalThis, Symbol.for("webdlpack.context"), saved);
  }
}

test("webdlpack passes every check that runs without WebGPU; the rest say why they skip", async () => {
  const lines: string[] = [];
  const report = await runConformance({ getContext, producer, consumer, print: (l) => lines.push(l) });
  assert.deepEqual(
    report.results.map((r) => r.check),
    [...CHECK_NAMES],
  );
  assert.equal(report.failed, 0, formatReport(report));
  assert.equal(report.warned, 0, formatReport(report));
  const passed = report.results.filter((r) => r.status === "pass").map((r) => r.check);
  for (const c of [
    "global.record",
    "global.singleton",
    "global.major-mismatch",
    "global.older-minor",
    "global.malformed",
    "context.members",
    "errors.shape",
    "dlpack.layout",
    "producer.strides",
    "producer.cpu-alignment",
    "producer.deleter-frees",
    "consumer.deleter-once",
    "consumer.null-strides",
    "consumer.other-major",
    "consumer.bad-flags",
    "consumer.out-of-bounds",
  ]) {
    assert.ok(passed.includes(c), `${c} did not pass:\n${formatReport(report)}`);
  }
  for (const r of report.results.filter((x) => x.status === "skip"))
    assert.match(r.detail, /WebGPU/, `${r.check}: ${r.detail}`);
  assert.equal(lines.length, CHECK_NAMES.length + 1);
});

test("broken getContext functions, producers and consumers fail their checks", async () => {
  const key = Symbol.for("webdlpack.context");
  const slot = globalThis as unknown as Record<symbol, { context: unknown; protocol: unknown } | undefined>;
  assert.equal(await statusOf({ getContext: () => slot[key]?.context as never }, "global.major-mismatch"), "fail");
  assert.equal(
    await statusOf({ getContext: () => ({ protocol: { major: 1, minor: 2 } }) as never }, "global.singleton"),
    "fail",
  );
  const edited = (edit: (v: DataView, address: number, host: WasmHost) => void): TensorProducer => ({
    devices: ["cpu"],
    produce(host, req) {
      const address = producer.produce(host, req) as number;
      edit(new DataView(host.buffer), address, host);
      return address;
    },
  });
  assert.equal(
    await statusOf({ producer: edited((v, a) => v.setUint32(a + 24 + 24, 0, true)) }, "producer.strides"),
    "fail",
  );
  assert.equal(await statusOf({ producer: edited((v, a) => v.setUint32(a, 2, true)) }, "producer.version"), "fail");
  assert.equal(
    await statusOf(
      { producer: edited((v, a) => v.setUint32(a + 24, v.getUint32(a + 24, true) + 4, true)) },
      "producer.cpu-alignment",
    ),
    "warn",
  );
  const lazy: TensorConsumer = { consume: () => ({ values: [0.5, 1, 2, 3, 4, 5.25], release: () => undefined }) };
  assert.equal(await statusOf({ consumer: lazy }, "consumer.deleter-once"), "fail");
  assert.equal(await statusOf({ consumer: lazy }, "consumer.other-major"), "fail");
  const refusesWithoutDeleter: TensorConsumer = {
    consume: () => {
      throw new WebDLPackError("BAD_FLAGS", "no", { field: "flags" });
    },
  };
  assert.equal(await statusOf({ consumer: refusesWithoutDeleter }, "consumer.bad-flags"), "fail");
});
