#!/usr/bin/env node
/**
 * Micro-benchmark (not a test) of the release hot paths, for comparing builds in one process:
 * `tensor.toManaged(host)` + the struct's deleter (a 1 KiB float32 tensor in the host's memory, with an owner),
 * the same struct taken by `Tensor.fromManaged` and disposed (the JS side of to_js, fromPython and C → JS: decode,
 * Tensor, ownership, dispose running the deleter), and `ctx.allocWebGPU(1024)` + `ctx.freeWebGPU(ptr)` (bucket
 * cache warm, the Node tests' fake GPU).
 * Each round times every build once, in rotating order, in CPU time; it prints per-build medians and minimums
 * and, for each build after the first, the median of its per-round ratio to the first.
 *
 *   nice npx tsc -p tests/js/tsconfig.json && cp -r build/tests-js /tmp/a    (one copy per build to compare)
 *   node bench/release-cost.mjs /tmp/a /tmp/b        (N=20000 operations per sample, ROUNDS=61)
 * Results (docs/ownership.md, "One stays apart") were measured this way.
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";

const dirs = process.argv.slice(2).map((d) => pathToFileURL(resolve(d)).href);
if (dirs.length === 0) throw new Error("usage: node bench/release-cost.mjs BUILD_DIR [BUILD_DIR ...]");
const N = Number(process.env.N ?? 20000);
const ROUNDS = Number(process.env.ROUNDS ?? 61);

async function build(dir) {
  const { Tensor } = await import(`${dir}/js/src/tensor/index.js`);
  const dl = await import(`${dir}/js/src/dlpack/index.js`);
  const { createTestHost } = await import(`${dir}/js/src/testing/index.js`);
  const { PageContext } = await import(`${dir}/js/src/context/context.js`);
  const { CONTEXT_PROTOCOL } = await import(`${dir}/js/src/context/get-context.js`);
  const fakes = await import(`${dir}/tests/js/context-fakes.js`);
  const host = createTestHost();
  const data = host.malloc(1024);
  const cpu = { deviceType: 1, deviceId: 0 };
  const tensor = Tensor.fromManaged(
    host,
    dl.writeManagedTensorVersioned(host, { data, device: cpu, dtype: "float32", shape: [256] }),
  );
  const first = tensor.toManaged(host);
  const deleter = dl.readManagedTensorVersioned(host, first).deleter;
  host.callVoidPointer(deleter, first);
  const ctx = new PageContext(CONTEXT_PROTOCOL);
  await ctx.setup({ gpu: fakes.asGPU(new fakes.FakeGPU()), cacheMode: "bucket" });
  return {
    exportLoop(n) {
      for (let i = 0; i < n; i++) host.callVoidPointer(deleter, tensor.toManaged(host));
    },
    importLoop(n) {
      for (let i = 0; i < n; i++) Tensor.fromManaged(host, tensor.toManaged(host)).dispose();
    },
    allocLoop(n) {
      for (let i = 0; i < n; i++) ctx.freeWebGPU(ctx.allocWebGPU(1024));
    },
  };
}

const builds = [];
for (const dir of dirs) builds.push(await build(dir));
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const ns = (fn, n) => {
  const t0 = cpuMs();
  fn(n);
  return ((cpuMs() - t0) / n) * 1e6;
};
const res = builds.map(() => ({ exp: [], imp: [], alloc: [] }));
for (const b of builds) {
  b.exportLoop(N);
  b.importLoop(N);
  b.allocLoop(N / 4);
}
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < builds.length; k++) {
    const i = (k + r) % builds.length;
    res[i].exp.push(ns(builds[i].exportLoop, N));
    res[i].imp.push(ns(builds[i].importLoop, N));
    res[i].alloc.push(ns(builds[i].allocLoop, N / 4));
  }
}
const median = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
const min = (a) => Math.min(...a);
for (let i = 0; i < builds.length; i++) {
  const { exp, imp, alloc } = res[i];
  console.log(
    `${process.argv[2 + i]}: toManaged+deleter median ${median(exp).toFixed(0)} ns, min ${min(exp).toFixed(0)}; ` +
      `toManaged+fromManaged+dispose median ${median(imp).toFixed(0)} ns, min ${min(imp).toFixed(0)}; ` +
      `alloc+free median ${median(alloc).toFixed(0)} ns, min ${min(alloc).toFixed(0)}`,
  );
  if (i > 0) {
    const ratio = (key) => median(res[i][key].map((x, r) => x / res[0][key][r])).toFixed(3);
    console.log(
      `  ÷ ${process.argv[2]}: toManaged+deleter ×${ratio("exp")}, toManaged+fromManaged+dispose ×${ratio("imp")}, ` +
        `alloc+free ×${ratio("alloc")}`,
    );
  }
}
