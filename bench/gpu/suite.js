// One GPU transfer benchmark run, the same in Node (node.mjs) and in Chromium (transfers.html). At each size:
//   cold: each variant's FIRST call on a fresh device (webdlpack's after ctx.setup on it, which measures the device
//         and makes staging ready; the source buffer is filled by a shader, so nothing has used writeBuffer or a
//         mapped buffer there before), `coldReps` times (at most 3 from 64 MiB), the variants in rotating order;
//   warm: on one fresh device, rounds of one call of every variant, each round in a new order (seeded shuffle, so every
//         variant follows every other one alike; a round of warm-up first, not kept), until the size's budget is spent.
// Every ratio the report draws compares variants of the same size and phase from this run. Returns the rows with
// their raw samples, and the setup times (the first setup measures the adapter, later ones reuse its figures).
import { budgetFor, pattern, row } from "./measure.js";
import { variantsAt } from "./variants.js";

const U = { COPY_SRC: 4, COPY_DST: 8, STORAGE: 128 };

/** Rotate `list` left by `k`. */
const rotate = (list, k) => list.map((_, i) => list[(i + k) % list.length]);

/** A seeded xorshift generator of floats in [0, 1) (the same order every run). */
export function seeded(seed) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

/** `list` in an order drawn from `random` (Fisher–Yates). */
export function shuffled(list, random) {
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list;
}

/** The pattern (measure.js patternWord) computed on the GPU: word i of the buffer is hash(i). */
const FILL_WGSL = `
override seed: u32;
override base: u32 = 0;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3u, @builtin(num_workgroups) groups: vec3u) {
  let k = g.x + g.y * groups.x * 256u;
  if (k >= arrayLength(&out)) { return; }
  var x = ((base + k) * 0x9e3779b9u) ^ seed;
  x ^= x >> 16u;
  x *= 0x7feb352du;
  x ^= x >> 15u;
  x *= 0x846ca68bu;
  x ^= x >> 16u;
  out[k] = x;
}`;
/** Bytes one dispatch fills (within the default maxStorageBufferBindingSize, 128 MiB). */
const FILL_CHUNK = 64 * 2 ** 20;

/**
 * Fill the first `n` bytes (a multiple of 4) of `buffer` (STORAGE usage) with the pattern of `seed`, submitted now.
 * A shader, not writeBuffer or a mapped buffer: a variant's first call on a fresh device must be the first of its
 * kind there (a writeBuffer of the same size before it would warm writeBuffer's own staging).
 */
export function fillOnGPU(device, buffer, n, seed) {
  const module = device.createShaderModule({ code: FILL_WGSL });
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  for (let at = 0; at < n; at += FILL_CHUNK) {
    const size = Math.min(FILL_CHUNK, n - at);
    const pipeline = device.createComputePipeline({
      layout: "auto",
      compute: { module, entryPoint: "main", constants: { seed, base: at / 4 } },
    });
    const bindGroup = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [{ binding: 0, resource: { buffer, offset: at, size } }],
    });
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, bindGroup);
    const groups = Math.ceil(size / 4 / 256);
    const x = Math.min(groups, 65535);
    pass.dispatchWorkgroups(x, Math.ceil(groups / x));
  }
  pass.end();
  device.queue.submit([encoder.finish()]);
}

/**
 * @param {{newDevice: () => Promise<{device: GPUDevice, info: GPUAdapterInfo}>, webdlpack: object, sizes: number[],
 *   coldReps?: number, log?: (s: string) => void}} opts
 */
export async function runTransferBench({ newDevice, webdlpack, sizes, coldReps = 5, log = () => {} }) {
  const ctx = webdlpack.getContext();
  const rows = [];
  const setups = [];
  let calibration = null;
  const t0 = performance.now();
  const say = (what) => log(`  ${((performance.now() - t0) / 1000).toFixed(1)} s  ${what}`);

  /** A fresh device, set up as the context's device 0 when `withCtx`; the buffers of a size on it. */
  async function open(n, withCtx) {
    const { device, info } = await newDevice();
    if (withCtx) {
      const t = performance.now();
      await ctx.setup({ device, adapterInfo: info });
      setups.push(performance.now() - t);
    }
    const expected = pattern(new Uint8Array(n), 13);
    const env = { device, ctx, n, expected, host: pattern(new Uint8Array(n), 17) };
    if (withCtx) {
      env.srcPtr = await ctx.allocWebGPUChecked(n, { label: "bench source" });
      env.dstPtr = await ctx.allocWebGPUChecked(n, { label: "bench destination" });
      env.src = ctx.gpuPointerToBuffer(env.srcPtr);
      env.dst = ctx.gpuPointerToBuffer(env.dstPtr);
    } else {
      env.src = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
      env.dst = device.createBuffer({ size: n, usage: U.STORAGE | U.COPY_SRC | U.COPY_DST });
    }
    fillOnGPU(device, env.src, n, 13);
    await device.queue.onSubmittedWorkDone();
    return env;
  }

  /** Free the size's buffers and destroy the device (the context sees it lost, so the next setup makes a new one). */
  async function close(env) {
    if (env.srcPtr !== undefined) {
      ctx.freeWebGPU(env.srcPtr);
      ctx.freeWebGPU(env.dstPtr);
    } else {
      env.src.destroy();
      env.dst.destroy();
    }
    env.device.destroy();
    await env.device.lost;
    await new Promise((resolve) => setTimeout(resolve, 0));
  }

  /** Clear the destination, run once, check the bytes. */
  async function runChecked(env, inst) {
    const enc = env.device.createCommandEncoder();
    enc.clearBuffer(env.dst);
    env.device.queue.submit([enc.finish()]);
    await inst.run();
    await inst.check();
  }

  for (const n of sizes) {
    const variants = variantsAt(n);
    const meta = (v, phase) => ({ group: v.group, direction: v.direction, phase });

    const cold = new Map(variants.map((v) => [v, []]));
    for (let rep = 0; rep < (n >= 64 * 2 ** 20 ? Math.min(coldReps, 3) : coldReps); rep++) {
      for (const v of rotate(variants, rep)) {
        const env = await open(n, v.ctx);
        const inst = v.make(env);
        const t = performance.now();
        await inst.run();
        cold.get(v).push(performance.now() - t);
        if (v.ctx && v.direction === "upload") cold.get(v).path = ctx.transferStats(0).lastUploadPath;
        await inst.check();
        inst.dispose();
        await close(env);
      }
    }
    for (const v of variants) rows.push(row(v.name, n, cold.get(v), { ...meta(v, "cold"), path: cold.get(v).path }));
    say(`cold at ${n} B`);

    const env = await open(n, true);
    const insts = variants.map((v) => v.make(env));
    const warm = insts.map(() => []);
    const b = budgetFor(n);
    const random = seeded(n);
    let spent = 0;
    for (let round = 0; round <= b.maxRuns && (round <= b.minRuns || spent < b.budgetMs); round++) {
      for (const k of shuffled([...insts.keys()], random)) {
        const t = performance.now();
        await insts[k].run();
        const dt = performance.now() - t;
        if (round > 0) {
          warm[k].push(dt);
          spent += dt;
        }
      }
    }
    for (const inst of insts) await runChecked(env, inst);
    const stats = ctx.transferStats(0);
    calibration ??= stats.calibration;
    variants.forEach((v, k) =>
      rows.push(
        row(v.name, n, warm[k], {
          ...meta(v, "warm"),
          ...(v.ctx && v.direction === "upload" ? { path: stats.lastUploadPath } : {}),
        }),
      ),
    );
    for (const inst of insts) inst.dispose();
    await close(env);
    say(`warm at ${n} B (${warm[0].length} rounds)`);
  }
  return { rows, setups, calibration };
}
