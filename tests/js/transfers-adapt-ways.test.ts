/**
 * Warm upload ways that follow what uploads cost while the device is used (transfers/adapt-ways.ts), where WebGPU
 * runs in-process: a class switches to the way whose synchronous call is clearly faster and leaves a way that turned
 * slow; probes are spaced further after losing; a plan without `adaptWarm` never probes; a probe keeps the budget
 * and the typed errors. Against fake WebGPU (tests/js/context-fakes.ts) whose writeBuffer and submit take the times a
 * test sets on a clock the test owns: nothing here is timed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ADAPT_FROM_BYTES,
  LOSS,
  MAX_EVERY,
  MIN_EVERY,
  SWITCH_MARGIN,
  type UploadWay,
  WarmWays,
} from "../../js/src/context/transfers/adapt-ways.js";
import {
  DEFAULT_TRANSFER_PLAN,
  DeviceTransfers,
  directBelow,
  planFor,
} from "../../js/src/context/transfers/device-transfers.js";
import { Inflight } from "../../js/src/context/transfers/inflight.js";
import { WriteRing } from "../../js/src/context/transfers/staging.js";
import { type UploadHistory, type WritePlan, writeRange } from "../../js/src/context/transfers/write.js";
import { DeviceMeter } from "../../js/src/context/ground/meter.js";
import { WebDLPackError } from "../../js/src/errors.js";
import { asGPU, FakeDevice } from "./context-fakes.js";
import { useVirtualClock } from "./calibrate-script.js";

useVirtualClock(); // DeviceTransfers' own WarmWays reads performance.now: frozen here, never the machine's time

const KiB = 1024;
const MiB = 2 ** 20;
const GiB = 2 ** 30;
const N = 2 * MiB; // the uploads: of the class from 1 MiB
const usage = 0x80 | 0x4 | 0x8; // STORAGE | COPY_SRC | COPY_DST

/** The GPU work queued so far done, and the task that makes staging after it (Ring.prepareSoon) run. */
async function idle(device: FakeDevice): Promise<void> {
  await device.queue.onSubmittedWorkDone();
  await new Promise((r) => setImmediate(r));
}

/**
 * One device's uploads of N bytes through writeRange, the class's ways set up as `setupWarm` (cold: `setupCold`).
 * Each writeBuffer call takes `cost.writeBuffer` ms of the test's clock, each staged submit `cost.staging`.
 */
function rig(setupWarm: UploadWay, plan: Partial<WritePlan> = {}, setupCold: UploadWay = "staging") {
  const device = new FakeDevice([], { maxBufferSize: GiB });
  let clock = 0;
  const cost = { writeBuffer: 0.3125, staging: 0.40625 }; // ms; sums of these are exact
  const calls = { writeBuffer: 0, submit: 0 };
  const writeBuffer = device.queue.writeBuffer.bind(device.queue);
  device.queue.writeBuffer = (...args: Parameters<typeof writeBuffer>) => {
    clock += cost.writeBuffer;
    calls.writeBuffer += 1;
    writeBuffer(...args);
  };
  const submit = device.queue.submit.bind(device.queue);
  device.queue.submit = (buffers) => {
    clock += cost.staging;
    calls.submit += 1;
    submit(buffers);
  };
  const ring = new WriteRing(asGPU<GPUDevice>(device), (b) => b.destroy(), 64 * MiB);
  const inflight = new Inflight(asGPU<GPUDevice>(device), "fake");
  const writePlan: WritePlan = {
    classes: [{ fromBytes: MiB, cold: setupCold, warm: setupWarm }],
    makeStaging: true,
    minPieceBytes: 256 * MiB, // in-process: one piece
    maxPieces: 8,
    adaptWarm: true,
    ...plan,
  };
  const ways = new WarmWays(() => clock);
  const history: UploadHistory = { warm: 0, ways };
  const target = device.createBuffer({ size: 4 * MiB, usage });
  let fill = 0;
  /** One upload (its bytes checked in the target), then the GPU work done and staging mapped again. */
  const upload = async (): Promise<string> => {
    fill = (fill % 250) + 1;
    const bytes = new Uint8Array(N).fill(fill);
    const path = writeRange(asGPU(device), ring, inflight, writePlan, history, asGPU(target), 0, bytes);
    assert.equal(target.data[0], fill, "the bytes arrived");
    assert.equal(target.data[N - 1], fill);
    await idle(device);
    await ring.settled(); // and mapped again
    return path;
  };
  const run = async (n: number): Promise<string[]> => {
    const paths: string[] = [];
    for (let i = 0; i < n; i++) paths.push(await upload());
    return paths;
  };
  return { device, ring, ways, history, cost, calls, target, upload, run, plan: writePlan, inflight };
}

/** The indices of `paths` that are `path`. */
const where = (paths: readonly string[], path: string): number[] => paths.flatMap((p, i) => (p === path ? [i] : []));

test("a class set up for staging takes writeBuffer where its call is clearly faster, and leaves it when it turns slow", async () => {
  // dawn.node on the H200, 4 MiB on a device that uploads only that size: writeBuffer 0.345 ms, kept staging 0.40
  // (here 0.3125 and 0.40625 ms a call).
  const r = rig("staging");
  assert.equal(await r.upload(), "staging", "cold: setup's way");
  const warm = await r.run(2 * MIN_EVERY);
  // Warm uploads 1–15 stage; the 16th probes writeBuffer (0.3125 × 1.15 < 0.40625): the class takes it from then
  // on, and probes staging every 16th upload (0.40625 < 1.5 × 0.3125: a close loss leaves K).
  assert.deepEqual(
    where(warm, "writeBuffer"),
    [...Array(2 * MIN_EVERY).keys()].filter((i) => i >= MIN_EVERY - 1 && i !== 2 * MIN_EVERY - 1),
  );
  assert.equal(warm.at(-1), "staging", "the 32nd: a staging probe, through the class's own kept buffer");
  assert.deepEqual(r.ways.view(0), {
    way: "writeBuffer",
    every: MIN_EVERY,
    estimates: { writeBuffer: 0.3125 / N, staging: 0.40625 / N },
  });
  // The application starts uploading other sizes: Dawn's writeBuffer makes a buffer per call (H200: 1.77 ms, kept
  // staging 0.47; here 1.75 and 0.46875). One slow call is noise (the median of the last three); the second leaves
  // writeBuffer.
  r.cost.writeBuffer = 1.75;
  r.cost.staging = 0.46875;
  assert.deepEqual(await r.run(4), ["writeBuffer", "writeBuffer", "staging", "staging"]);
  assert.equal(r.ways.view(0)!.way, "staging");
});

test("a class set up for writeBuffer stages where staging's call is clearly faster; no probe makes staging inline", async () => {
  // The long-lived device of bench/gpu/app.js: writeBuffer's call 1.77 ms, kept staging's 0.47.
  const r = rig("writeBuffer", {}, "writeBuffer");
  r.cost.writeBuffer = 1.75;
  r.cost.staging = 0.46875;
  assert.equal(await r.upload(), "writeBuffer", "cold");
  const made = r.ring.stats().created;
  assert.equal(made, 1, "the class's staging made after its first upload, for probes");
  const warm = await r.run(MIN_EVERY + 2);
  assert.deepEqual(where(warm, "staging"), [MIN_EVERY - 1, MIN_EVERY, MIN_EVERY + 1]);
  assert.equal(r.ring.stats().created, made, "every staged upload took the kept buffer");
  assert.equal(r.ways.view(0)!.way, "staging");
});

test("probes lose: spacing doubles up to 256; a way that holds resets it to 16, one left at once doubles it", async () => {
  // Through uploads: staging in use (0.46875 ms), writeBuffer 1.75 (≥ 1.5×): probes at warm uploads 16, 48, 112.
  const r = rig("staging");
  r.cost.writeBuffer = 1.75;
  r.cost.staging = 0.46875;
  await r.upload();
  const warm = await r.run(120);
  assert.deepEqual(where(warm, "writeBuffer"), [15, 47, 111]);
  assert.equal(r.ways.view(0)!.every, 8 * MIN_EVERY);
  assert.equal(r.ring.stats().created, 1, "no staging made beside the class's one kept buffer");

  // The rule itself, on a clock of its own: picks and samples (ms per byte).
  const ways = new WarmWays(() => 0);
  let probes: number[] = [];
  let t = { writeBuffer: 1.77, staging: 0.47 };
  const step = (i: number): void => {
    const way = ways.pick(0, "staging");
    if (way !== ways.inUse(0)) probes.push(i);
    ways.record(0, way, t[way], 1);
  };
  for (let i = 1; i <= 2000; i++) step(i);
  assert.deepEqual(probes.slice(0, 6), [16, 48, 112, 240, 496, 752]);
  assert.ok(
    probes.slice(5).every((p, j) => p - probes[4 + j]! === MAX_EVERY),
    "at most every 256th",
  );
  assert.equal(ways.view(0)!.every, MAX_EVERY);
  // writeBuffer turns fast (0.3; staging 0.4, a close loss): its next probe wins and the class switches; once
  // writeBuffer held for 16 uploads K is 16 again, and staging is probed every 16th upload.
  t = { writeBuffer: 0.3, staging: 0.4 };
  probes = [];
  for (let i = 2001; i <= 2401; i++) step(i);
  assert.equal(ways.inUse(0), "writeBuffer");
  assert.equal(ways.view(0)!.every, MIN_EVERY);
  assert.deepEqual(probes, [2032, ...Array.from({ length: 23 }, (_, j) => 2049 + MIN_EVERY * j)]);
  // A pause makes two calls of the way in use slow: the class leaves it for the other way's last probe, and probes
  // the way left again within 16 uploads, not K: back on writeBuffer at once.
  t = { writeBuffer: 3, staging: 0.4 };
  step(2402);
  assert.equal(ways.inUse(0), "writeBuffer", "one slow call moves nothing");
  step(2403);
  assert.equal(ways.inUse(0), "staging", "writeBuffer left on its second slow call");
  t = { writeBuffer: 0.3, staging: 0.4 };
  probes = [];
  for (let i = 2404; i <= 2425; i++) step(i);
  assert.deepEqual(probes, [2419]);
  assert.equal(ways.inUse(0), "writeBuffer");
  // A way that only looked faster on its probe and is left within 16 uploads: K doubles, not reset.
  const flip = new WarmWays(() => 0);
  for (let i = 1; i < MIN_EVERY; i++) flip.record(0, flip.pick(0, "staging"), 0.47, 1);
  assert.equal(flip.pick(0, "staging"), "writeBuffer", "the 16th: a probe");
  flip.record(0, "writeBuffer", 0.3, 1); // looks faster: switched
  assert.equal(flip.inUse(0), "writeBuffer");
  assert.equal(flip.pick(0, "staging"), "writeBuffer");
  flip.record(0, "writeBuffer", 1.77, 1); // then slow at once: left
  assert.equal(flip.inUse(0), "staging");
  assert.equal(flip.view(0)!.every, 2 * MIN_EVERY);
  assert.ok(LOSS >= SWITCH_MARGIN);
});

test("a plan without adaptWarm never probes: every warm upload takes setup's way", async () => {
  for (const adaptWarm of [false, undefined]) {
    const r = rig("staging", adaptWarm === undefined ? {} : { adaptWarm });
    if (adaptWarm === undefined) delete (r.plan as { adaptWarm?: boolean }).adaptWarm;
    r.cost.writeBuffer = 0.01; // far faster: it would win any probe
    const paths = await r.run(2 * MIN_EVERY + 2);
    assert.deepEqual(new Set(paths), new Set(["staging"]));
    assert.equal(r.calls.writeBuffer, 0);
    assert.equal(r.ways.view(0), undefined, "no class state: nothing picked or sampled");
  }
  // Only the in-process plan on a GPU adapts; a browser's and a software adapter's do not.
  const gpu = { vendor: "nvidia", architecture: "hopper", description: "" };
  const software = { vendor: "google", architecture: "swiftshader", description: "" };
  assert.equal(planFor(gpu, true).write.adaptWarm, true);
  assert.equal(planFor(gpu, false).write.adaptWarm, false);
  assert.equal(planFor(software, true).write.adaptWarm, false);
  assert.equal(DEFAULT_TRANSFER_PLAN.write.adaptWarm, false);
  // Classes below ADAPT_FROM_BYTES never probe, even in an adapting plan.
  const small = rig("staging", { classes: [{ fromBytes: 256 * KiB, cold: "staging", warm: "staging" }] });
  assert.ok(256 * KiB < ADAPT_FROM_BYTES && N >= ADAPT_FROM_BYTES);
  small.cost.writeBuffer = 0.01;
  assert.deepEqual(new Set(await small.run(MIN_EVERY + 2)), new Set(["staging"]));
});

test("the direct writeBuffer path stops at the first class that adapts", () => {
  const classes = [
    { fromBytes: 128 * KiB, cold: "writeBuffer", warm: "writeBuffer" },
    { fromBytes: 512 * KiB, cold: "writeBuffer", warm: "writeBuffer" },
    { fromBytes: 8 * MiB, cold: "staging", warm: "staging" },
  ] as const;
  assert.equal(directBelow(classes, { warm: 7 }), 8 * MiB);
  assert.equal(directBelow(classes, { warm: 7 }, true), 512 * KiB);
});

test("DeviceTransfers: a class set up for writeBuffer is probed through staging; lastUploadPath says so", async () => {
  const device = new FakeDevice([], { maxBufferSize: GiB });
  const gpu = { vendor: "nvidia", architecture: "hopper", description: "" };
  const base = planFor(gpu, true);
  const plan = {
    ...base,
    write: { ...base.write, classes: [{ fromBytes: 512 * KiB, cold: "writeBuffer", warm: "writeBuffer" } as const] },
  };
  const t = new DeviceTransfers(asGPU<GPUDevice>(device), "fake", (b) => b.destroy(), plan);
  const target = device.createBuffer({ size: MiB, usage });
  const known = { buffer: asGPU<GPUBuffer>(target), size: MiB, usage };
  const paths: string[] = [];
  for (let i = 0; i <= MIN_EVERY; i++) {
    const bytes = new Uint8Array(MiB).fill(i + 1);
    t.upload(known, 0, bytes);
    paths.push(t.stats().lastUploadPath!);
    assert.equal(target.data[MiB - 1], i + 1);
    await idle(device);
    await t.settleStaging();
  }
  assert.deepEqual(where(paths, "staging"), [MIN_EVERY], "the 16th warm upload probed staging, and said so");
});

test("a probe keeps the memory budget and the typed errors", async () => {
  // Staging's call far cheaper, so probes want it; a budget with no room for the class's staging.
  const r = rig("writeBuffer", {}, "writeBuffer");
  r.cost.writeBuffer = 1.75;
  r.cost.staging = 0.125;
  await r.ring.prepare(16 * MiB, 1); // what setup keeps ready: a larger class's kept buffer
  const readOnly = r.device.createBuffer({ size: 4 * MiB, usage: 0x80 | 0x4 }); // no COPY_DST
  const meter = new DeviceMeter(asGPU<GPUDevice>(r.device));
  meter.install();
  const refused: number[] = [];
  meter.overBudget = (_m, requested, _owner, refusable) => {
    refused.push(requested);
    if (refusable) throw new WebDLPackError("OUT_OF_MEMORY", "past the budget", { field: "size", value: requested });
  };
  meter.budget = MiB; // nothing more of webdlpack's own fits
  const created = r.device.created.length;
  const stats = r.ring.stats();
  assert.equal(await r.upload(), "writeBuffer", "cold");
  // Refused uploads throw their typed errors and are no upload of the class: the 16th warm one still probes.
  const bytes = new Uint8Array(N);
  const write = (target: GPUBuffer, offset: number): string =>
    writeRange(asGPU(r.device), r.ring, r.inflight, r.plan, r.history, target, offset, bytes);
  assert.throws(
    () => write(asGPU(r.target), 3 * MiB),
    (e) => e instanceof WebDLPackError && e.code === "OUT_OF_BOUNDS",
  );
  assert.throws(
    () => write(asGPU(readOnly), 0),
    (e) => e instanceof WebDLPackError && e.code === "UNSUPPORTED",
  );
  const warm = await r.run(MIN_EVERY);
  assert.deepEqual(new Set(warm), new Set(["writeBuffer"]), "the probe found no staging of its class: writeBuffer");
  assert.equal(r.ways.view(0)!.estimates.staging, undefined, "a probe that fell back is no staging sample");
  assert.equal(r.device.created.length, created, "no staging made");
  assert.deepEqual(refused, [], "nothing even asked the budget for more");
  assert.equal(r.ring.stats().kept, stats.kept, "setup's larger kept buffer stays for the uploads it serves");
  assert.equal(r.ring.stats().reused, stats.reused);
  // The budget lifted: the class's staging is made after the next upload, and the next probe stages and wins.
  meter.budget = null;
  const more = await r.run(MIN_EVERY + 1);
  assert.equal(r.ring.owned(N), 1);
  assert.deepEqual(where(more, "staging"), [MIN_EVERY - 1, MIN_EVERY]);
  // A lost device: the upload throws DEVICE_LOST, a probe or not.
  r.inflight.lose("destroyed");
  assert.throws(
    () => write(asGPU(r.target), 0),
    (e) => e instanceof WebDLPackError && e.code === "DEVICE_LOST",
  );
  meter.uninstall();
});
