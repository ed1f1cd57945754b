/**
 * The FinalizationRegistry safety net: a Tensor owning a managed struct that
 * is garbage-collected without dispose still runs the deleter, exactly once,
 * and never after dispose. GC needs `node --expose-gc`, so the checks run in
 * a child node process that imports the compiled modules.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";

const dlpackUrl = new URL("../../js/src/dlpack/index.js", import.meta.url).href;
const testingUrl = new URL("../../js/src/testing/index.js", import.meta.url).href;
const tensorUrl = new URL("../../js/src/tensor/index.js", import.meta.url).href;

const CHILD = `
const { writeManagedTensorVersioned } = await import(${JSON.stringify(dlpackUrl)});
const { createTestHost } = await import(${JSON.stringify(testingUrl)});
const { Tensor, finalizerStats, trimExportBlocks } = await import(${JSON.stringify(tensorUrl)});
const host = createTestHost();
const calls = new Map();
function make(name) {
  const data = host.malloc(16);
  let address = 0;
  const fn = host.addFunction((self) => {
    calls.set(name, (calls.get(name) ?? 0) + 1);
    host.free(data); host.free(self);
  });
  address = writeManagedTensorVersioned(host, { data, device: { deviceType: 1, deviceId: 0 }, dtype: "float32", shape: [4], deleter: fn });
  return address;
}
const settle = async () => {
  for (let i = 0; i < 10; i++) { globalThis.gc(); await new Promise((r) => setTimeout(r, 10)); }
};
(() => { Tensor.fromManaged(host, make("dropped")); })();
(() => { const t = Tensor.fromManaged(host, make("disposed")); t.dispose(); })();
// One task: a tensor disposed right after it was made leaves the pending list at once (last in line); the others
// made in that task, kept or disposed out of order, still go on the net or are skipped at its flush.
(() => {
  Tensor.fromManaged(host, make("taskKept"));
  Tensor.fromManaged(host, make("taskDisposed")).dispose();
  const outOfOrder = Tensor.fromManaged(host, make("taskDisposedEarly"));
  Tensor.fromManaged(host, make("taskKeptLast"));
  outOfOrder.dispose();
})();
let kept = Tensor.fromManaged(host, make("exported"));
const exported = kept.toManaged(host);
kept = null; // the export keeps it alive
await settle();
const mid = { dropped: calls.get("dropped") ?? 0, exportedBefore: calls.get("exported") ?? 0 };
const deleter = new DataView(host.buffer).getUint32(exported + 12, true);
host.callVoidPointer(deleter, exported); // consumer releases the export
await settle();
const keptBlocks = trimExportBlocks(host); // the export's struct block, kept for a later export
console.log(JSON.stringify({
  ...mid,
  disposed: calls.get("disposed") ?? 0,
  task: ["taskKept", "taskDisposed", "taskDisposedEarly", "taskKeptLast"].map((n) => calls.get(n) ?? 0),
  exportedAfter: calls.get("exported") ?? 0,
  finalized: finalizerStats().finalized,
  errors: finalizerStats().finalizerErrors,
  live: host.liveAllocations,
  keptBlocks,
}));
`;

test("an undisposed owning Tensor's deleter runs once on GC; disposed ones are not finalized", () => {
  const child = spawnSync(process.execPath, ["--expose-gc", "--input-type=module", "-e", CHILD], {
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(child.status, 0, child.stderr);
  const result = JSON.parse(child.stdout.trim().split("\n").pop()!);
  assert.deepEqual(result, {
    dropped: 1, // finalizer ran the deleter
    exportedBefore: 0, // the export kept the tensor (and the producer's bytes) alive
    disposed: 1, // dispose ran it; the finalizer did not run it again
    exportedAfter: 1, // after the consumer released the export, GC released the tensor
    task: [1, 1, 1, 1], // each once: the kept two by the finalizer, the disposed two by dispose
    finalized: 4, // "dropped", "exported", "taskKept" and "taskKeptLast"
    errors: 0,
    live: 0,
    keptBlocks: 1,
  });
});
