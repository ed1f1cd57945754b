/**
 * setup() asks for the adapter's ML features (shader-f16, subgroups) when the adapter has them, and reports
 * what it asked for in DeviceInfo.requestedFeatures (fake adapters here; SwiftShader in
 * tests/browser/worker.spec.ts: subgroups yes, shader-f16 no).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { PageContext } from "../../js/src/context/context.js";
import { CONTEXT_PROTOCOL } from "../../js/src/context/get-context.js";
import { ML_FEATURES } from "../../js/src/context/devices/setup.js";
import { asGPU, FakeAdapter, FakeDevice, FakeGPU } from "./context-fakes.js";
import { isCode } from "./helpers.js";

/** setup() on a new context with an adapter that has `features`; the DeviceInfo and what requestDevice got. */
async function setupWith(features: string[], cfg: Record<string, unknown> = {}) {
  const gpu = new FakeGPU(new FakeAdapter(new Set(features)));
  const info = await new PageContext(CONTEXT_PROTOCOL).setup({ gpu: asGPU<GPU>(gpu), ...cfg });
  return { info, asked: gpu.adapter!.lastDescriptor?.requiredFeatures ?? [] };
}

test("the ML features are shader-f16 and subgroups", () => {
  assert.deepEqual([...ML_FEATURES], ["shader-f16", "subgroups"]);
});

test("requested = adapter ∩ {shader-f16, subgroups}, plus requiredFeatures; the device has them", async () => {
  const cases: [string[], string[]][] = [
    [["subgroups", "timestamp-query"], ["subgroups"]], // SwiftShader: no shader-f16
    [
      ["shader-f16", "subgroups", "timestamp-query"],
      ["shader-f16", "subgroups"],
    ],
    [["shader-f16"], ["shader-f16"]],
    [["timestamp-query"], []],
  ];
  for (const [adapterFeatures, expected] of cases) {
    const { info, asked } = await setupWith(adapterFeatures);
    assert.deepEqual(info.requestedFeatures, expected, `adapter ${adapterFeatures.join(",")}`);
    assert.deepEqual(asked, expected);
    for (const f of expected) assert.ok(info.features.includes(f), `device has ${f}`);
    assert.ok(Object.isFrozen(info.requestedFeatures));
  }
  const { info } = await setupWith(["subgroups", "timestamp-query"], { requiredFeatures: ["timestamp-query"] });
  assert.deepEqual(info.requestedFeatures, ["subgroups", "timestamp-query"]);
});

test('features: "required" asks only for requiredFeatures; a bad value is INVALID_ARGUMENT naming cfg.features', async () => {
  assert.deepEqual((await setupWith(["shader-f16", "subgroups"], { features: "required" })).info.requestedFeatures, []);
  const { info } = await setupWith(["shader-f16", "subgroups"], {
    features: "required",
    requiredFeatures: ["subgroups"],
  });
  assert.deepEqual(info.requestedFeatures, ["subgroups"]);
  await assert.rejects(
    setupWith(["subgroups"], { features: "all" }),
    isCode("INVALID_ARGUMENT", /bad setup\(\) config/),
  );
  await assert.rejects(
    setupWith(["subgroups"], { features: "all" }),
    (err: unknown) => (err as { field?: string }).field === "cfg.features",
  );
});

test("a device given to setup() is used as it is: nothing requested", async () => {
  const device = new FakeDevice(["subgroups"]);
  const info = await new PageContext(CONTEXT_PROTOCOL).setup({ device: asGPU<GPUDevice>(device) });
  assert.deepEqual(info.requestedFeatures, []);
  assert.deepEqual(info.features, ["subgroups"]);
});
