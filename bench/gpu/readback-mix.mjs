#!/usr/bin/env node
/**
 * How much of a small readback's gap to the hand-written one comes from what runs between the calls (Node +
 * dawn.node). The fresh-device warm rounds of bench/gpu/suite.js time every variant once per round, in a new seeded
 * order each round; here the same rounds run with fewer or more of the suite's variants (variants.js), one fresh
 * device and ctx.setup per mix, and three readbacks into a kept array are compared:
 *
 *   raw                   the hand-written readback (the suite's anchor: one kept MAP_READ buffer)
 *   DeviceTransfers       webdlpack's transfers layer (readKnown: the staging ring, the map, the copy out)
 *   ctx.readbackInto      the public call (the pointer's table entry, the target's checks, then the layer above)
 *
 * Mixes: `pair` (raw and ctx.readbackInto only), `three` (+ DeviceTransfers), `reads` (every readback variant and
 * the empty submit), `all` (every variant of the suite at that size, uploads included, + DeviceTransfers); `--mixes`
 * picks some, in that order. `--warm-rounds N` runs N rounds of the mix, not timed, before the timed ones: how much of
 * the gap is V8 running webdlpack's code in its baseline tiers (the suite's 200 warm rounds are too few for its
 * optimizing compiler to take most of it; `node --trace-opt` says which functions it took). One process runs every
 * mix in turn: later mixes find the code warmer than the first does.
 *
 *   node bench/gpu/readback-mix.mjs [--sizes 1024,16384] [--rounds 400] [--passes 2] [--mixes pair,three,reads,all]
 *     [--warm-rounds 0] [--out FILE.json]
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { median } from "./interval.mjs";
import { pattern } from "./measure.js";
import { fillOnGPU, seeded, shuffled } from "./suite.js";
import { variantsAt } from "./variants.js";

const { values: args } = parseArgs({
  options: {
    sizes: { type: "string", default: "1024,16384" },
    rounds: { type: "string", default: "400" },
    passes: { type: "string", default: "2" },
    mixes: { type: "string", default: "pair,three,reads,all" },
    "warm-rounds": { type: "string", default: "0" },
    out: { type: "string" },
  },
});

const { create, globals } = await import("webgpu");
Object.assign(globalThis, globals);
const webdlpack = await import("../../js/dist/index.js");
const { transfersFor } = await import("../../js/dist/context/transfers/index.js");
const ctx = webdlpack.getContext();
const gpu = create([]); // one instance for every device: dawn.node aborts on a second one made later
const U = GPUBufferUsage;

const RAW = "readback into a reused array (raw)";
const OURS = "ctx.readbackInto reused TypedArray";
const LAYER = "DeviceTransfers.readKnown";

/** The transfers layer's readback into a kept array, as a variant of variants.js's shape. */
const layerVariant = {
  name: LAYER,
  direction: "readback",
  make(env) {
    const transfers = transfersFor(env.device);
    const out = new Uint8Array(env.n);
    const known = { buffer: env.src, size: env.src.size, usage: env.src.usage };
    const sink = (bytes, at) => out.set(bytes, at);
    return { run: () => transfers.readKnown(known, 0, env.n, sink), dispose: () => {} };
  },
};

/** The variants of each mix at `n` bytes. */
function mixes(n) {
  const suite = variantsAt(n);
  const named = (...names) => suite.filter((v) => names.includes(v.name));
  return {
    pair: named(RAW, OURS),
    three: [...named(RAW, OURS), layerVariant],
    reads: [...suite.filter((v) => v.direction !== "upload"), layerVariant],
    all: [...suite, layerVariant],
  };
}

/** A fresh device set up as the context's device 0, with a source and a destination of `n` bytes on it. */
async function open(n) {
  const adapter = await gpu.requestAdapter();
  if (adapter === null) throw new Error("no WebGPU adapter (bash scripts/vk-env.sh node …)");
  const device = await adapter.requestDevice({
    requiredLimits: { maxBufferSize: adapter.limits.maxBufferSize },
  });
  await ctx.setup({ device, adapterInfo: adapter.info });
  const env = { device, ctx, n, expected: pattern(new Uint8Array(n), 13), host: pattern(new Uint8Array(n), 17) };
  env.srcPtr = await ctx.allocWebGPUChecked(n, { label: "mix source", usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
  env.dstPtr = await ctx.allocWebGPUChecked(n, { label: "mix destination" });
  env.src = ctx.gpuPointerToBuffer(env.srcPtr);
  env.dst = ctx.gpuPointerToBuffer(env.dstPtr);
  fillOnGPU(device, env.src, n, 13);
  await device.queue.onSubmittedWorkDone();
  return { env, info: adapter.info };
}

/**
 * One mix at `n` bytes: medians (µs) of the three readbacks over `rounds` seeded rounds, after `warmRounds` + 1 rounds
 * not kept.
 */
async function runMix(n, variants, rounds, warmRounds) {
  const { env, info } = await open(n);
  const insts = variants.map((v) => v.make(env));
  const times = insts.map(() => []);
  const random = seeded(n);
  for (let round = -warmRounds; round <= rounds; round++) {
    for (const k of shuffled([...insts.keys()], random)) {
      const t = performance.now();
      await insts[k].run();
      if (round > 0) times[k].push((performance.now() - t) * 1000);
    }
  }
  const at = (name) => {
    const k = variants.findIndex((v) => v.name === name);
    return k < 0 ? null : median(times[k]);
  };
  const result = { raw: at(RAW), layer: at(LAYER), ours: at(OURS) };
  for (const inst of insts) inst.dispose();
  ctx.freeWebGPU(env.srcPtr);
  ctx.freeWebGPU(env.dstPtr);
  env.device.destroy();
  await env.device.lost;
  await new Promise((resolve) => setTimeout(resolve, 0));
  return { ...result, adapter: `${info.vendor} ${info.device || info.architecture}` };
}

const sizes = args.sizes.split(",").map(Number);
const warmRounds = Number(args["warm-rounds"]);
const picked = args.mixes.split(",");
const rows = [];
let adapter = "";
for (let pass = 1; pass <= Number(args.passes); pass++) {
  for (const n of sizes) {
    for (const [mix, variants] of Object.entries(mixes(n)).filter(([name]) => picked.includes(name))) {
      const r = await runMix(n, variants, Number(args.rounds), warmRounds);
      adapter = r.adapter;
      rows.push({
        pass,
        bytes: n,
        mix,
        warmRounds,
        variants: variants.length,
        raw: r.raw,
        layer: r.layer,
        ours: r.ours,
      });
      const ratio = (x) => (x === null ? "   —" : (r.raw / x).toFixed(2));
      const us = (x) => (x === null ? "    —" : x.toFixed(1).padStart(5));
      console.log(
        `pass ${pass} ${String(n).padStart(6)} B ${mix.padEnd(5)} (${String(variants.length).padStart(2)} variants, ` +
          `${warmRounds} untimed)` +
          `  raw ${us(r.raw)}  DeviceTransfers ${us(r.layer)} ${ratio(r.layer)}×  ctx.readbackInto ${us(r.ours)} ${ratio(r.ours)}×`,
      );
    }
  }
}
if (args.out) {
  const all = { adapter, rounds: Number(args.rounds), rows };
  writeFileSync(args.out, `${JSON.stringify(all, null, 1)}\n`);
}
process.exit(0);
