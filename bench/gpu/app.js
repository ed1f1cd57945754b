// The GPU transfer benchmark as applications use transfers (issue 33), the same in Node (node.mjs) and Chromium
// (transfers.html), beside the fresh-device tables of suite.js. Three phases, each timing webdlpack against the
// hand-written variants (variants.js) in the same rounds:
//   first: an upload as the first call right after `ctx.setup()` on a fresh device: the host bytes made before, the
//          destination from a synchronous `ctx.allocWebGPU`, no other work between (the hand-written variants: the
//          first call on a fresh device, the destination made just before); `firstReps` devices per variant and size;
//   long:  one long-lived device for every size: each round runs the sizes in a new seeded shuffled order (up and
//          down: 1 KiB right after 256 MiB and back), the small ones (up to `idleMaxBytes`) `smallRepeats` times each
//          at shuffled places among the large ones, and at each place every variant once in a shuffled order; the
//          first round (every size's first call on the device) is not kept. A small call's time spreads ±25 % from
//          call to call on the H200 (interquartile range of 1 KiB readbacks, 20 rounds), so with one sample a round
//          two identical code paths differed by 10–20 %: small sizes get more samples at little cost;
//   idle:  on that device, the small sizes with the queue drained and a timer of `idleMs` before every call.
// Rows carry phase "first" | "long" | "idle"; report.mjs draws their ratios like the cold/warm ones.
import { pattern, row } from "./measure.js";
import { fillOnGPU, seeded, shuffled } from "./suite.js";
import { VARIANTS, variantsAt } from "./variants.js";

const U = { COPY_SRC: 4, COPY_DST: 8, STORAGE: 128 };
const MiB = 2 ** 20;

const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * @param {{newDevice: () => Promise<{device: GPUDevice, info: GPUAdapterInfo}>, webdlpack: object, sizes: number[],
 *   firstReps?: number, longRounds?: number, smallRepeats?: number, idleRounds?: number, idleMs?: number,
 *   idleMaxBytes?: number,
 *   log?: (s: string) => void}} opts
 */
export async function runAppBench({
  newDevice,
  webdlpack,
  sizes,
  firstReps = 3,
  longRounds = 20,
  smallRepeats = 4,
  idleRounds = 100,
  idleMs = 5,
  idleMaxBytes = MiB,
  log = () => {},
}) {
  const ctx = webdlpack.getContext();
  const rows = [];
  const t0 = performance.now();
  const say = (what) => log(`  ${((performance.now() - t0) / 1000).toFixed(1)} s  ${what}`);
  const meta = (v, phase) => ({ group: v.group, direction: v.direction, phase });
  const hosts = new Map(sizes.map((n) => [n, pattern(new Uint8Array(n), 17)]));

  // first: one fresh device per call.
  const uploads = VARIANTS.filter((v) => v.direction === "upload");
  for (const n of sizes) {
    const first = new Map(uploads.map((v) => [v, []]));
    const paths = [];
    for (let rep = 0; rep < firstReps; rep++) {
      for (const v of uploads.map((_, i) => uploads[(i + rep) % uploads.length])) {
        const { device, info } = await newDevice();
        const env = { device, ctx, n, host: hosts.get(n) };
        if (v.ctx) {
          await ctx.setup({ device, adapterInfo: info });
          env.dstPtr = ctx.allocWebGPU(n, { label: "bench destination" });
          env.dst = ctx.gpuPointerToBuffer(env.dstPtr);
        } else {
          env.dst = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
        }
        const inst = v.make(env);
        const t = performance.now();
        await inst.run();
        first.get(v).push(performance.now() - t);
        if (v.ctx) paths.push(ctx.transferStats(0).lastUploadPath);
        await inst.check();
        inst.dispose();
        if (v.ctx) ctx.freeWebGPU(env.dstPtr);
        else env.dst.destroy();
        device.destroy();
        await device.lost;
        await pause(0);
      }
    }
    for (const v of uploads)
      rows.push(
        row(v.name, n, first.get(v), { ...meta(v, "first"), ...(v.ctx ? { path: summarizePaths(paths) } : {}) }),
      );
    say(`first after setup at ${n} B`);
  }

  // long and idle: one device for everything.
  const { device, info } = await newDevice();
  await ctx.setup({ device, adapterInfo: info });
  const envs = new Map();
  for (const n of sizes) {
    const env = { device, ctx, n, expected: pattern(new Uint8Array(n), 13), host: hosts.get(n) };
    env.srcPtr = await ctx.allocWebGPUChecked(n, { label: "bench source" });
    env.dstPtr = await ctx.allocWebGPUChecked(n, { label: "bench destination" });
    env.src = ctx.gpuPointerToBuffer(env.srcPtr);
    env.dst = ctx.gpuPointerToBuffer(env.dstPtr);
    fillOnGPU(device, env.src, n, 13);
    env.variants = variantsAt(n);
    env.insts = env.variants.map((v) => v.make(env));
    env.samples = env.variants.map(() => []);
    env.paths = [];
    envs.set(n, env);
  }
  await device.queue.onSubmittedWorkDone();
  const random = seeded(33);
  /** One call of variant `k` at `env`'s size, its time kept when `keep`. */
  const call = async (env, k, keep) => {
    const t = performance.now();
    await env.insts[k].run();
    const dt = performance.now() - t;
    if (!keep) return;
    env.samples[k].push(dt);
    if (env.variants[k].ctx && env.variants[k].direction === "upload")
      env.paths.push(ctx.transferStats(0).lastUploadPath);
  };
  const places = sizes.flatMap((n) => Array(n <= idleMaxBytes ? smallRepeats : 1).fill(n));
  for (let round = 0; round <= longRounds; round++) {
    for (const n of shuffled([...places], random)) {
      const env = envs.get(n);
      for (const k of shuffled([...env.insts.keys()], random)) await call(env, k, round > 0);
    }
  }
  const collect = (phase) => {
    for (const env of envs.values()) {
      if (env.samples[0].length === 0) continue;
      env.variants.forEach((v, k) =>
        rows.push(
          row(v.name, env.n, env.samples[k], {
            ...meta(v, phase),
            ...(v.ctx && v.direction === "upload" ? { path: summarizePaths(env.paths) } : {}),
          }),
        ),
      );
      env.samples = env.variants.map(() => []);
      env.paths = [];
    }
  };
  collect("long");
  const stagingAfterLong = ctx.transferStats(0);
  say(
    `long-lived device, ${longRounds} rounds of ${sizes.length} sizes in shuffled order (small ones ${smallRepeats}×)`,
  );

  const small = sizes.filter((n) => n <= idleMaxBytes);
  for (let round = 0; round < idleRounds; round++) {
    for (const n of shuffled([...small], random)) {
      const env = envs.get(n);
      for (const k of shuffled([...env.insts.keys()], random)) {
        await device.queue.onSubmittedWorkDone();
        await pause(idleMs);
        await call(env, k, true);
      }
    }
  }
  collect("idle");
  say(`idle: ${idleRounds} rounds of ${small.length} sizes, ${idleMs} ms between calls`);

  // Every variant's bytes are checked once more at the end (a benchmark that moves wrong bytes measures nothing).
  for (const env of envs.values()) {
    for (const inst of env.insts) {
      const enc = device.createCommandEncoder();
      enc.clearBuffer(env.dst);
      device.queue.submit([enc.finish()]);
      await inst.run();
      await inst.check();
    }
  }
  for (const env of envs.values()) {
    for (const inst of env.insts) inst.dispose();
    ctx.freeWebGPU(env.srcPtr);
    ctx.freeWebGPU(env.dstPtr);
  }
  const stats = ctx.transferStats(0);
  device.destroy();
  await device.lost;
  await pause(0);
  const staging = (s) => ({ read: s.read, write: s.write });
  return {
    rows,
    app: {
      firstReps,
      longRounds,
      smallRepeats,
      idleRounds,
      idleMs,
      afterLong: staging(stagingAfterLong),
      atEnd: staging(stats),
    },
  };
}

/** "staging" when every call took one path, else the counts ("staging 10, writeBuffer 2"). */
function summarizePaths(paths) {
  const counts = new Map();
  for (const p of paths) counts.set(p, (counts.get(p) ?? 0) + 1);
  return counts.size === 1 ? [...counts.keys()][0] : [...counts].map(([p, c]) => `${p} ${c}`).join(", ");
}
