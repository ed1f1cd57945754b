/**
 * The tvmjs adapter and GPU memory, in real Chromium with the TVM test models (tests/browser/frameworks.html):
 * ctx.memory()'s tvmjs row is what tvmjs holds at every step (its table less lent buffers, its uniform and
 * read pools), and under setup({memoryBudget}) tvmjs gives back its pool and staging when webdlpack, the
 * page or tvmjs itself needs room.
 */
import { frameworksTest as test, expect } from "./fixtures.js";

test("ctx.memory()'s tvmjs row is what tvmjs holds (its table less lent buffers, its uniform and read pools) at every step", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, loadTvmModels, createTvmVm } = window as any;
    const { limitDeviceCapacity } = await import("/tests/browser/device-capacity.js" as string);
    const tally = limitDeviceCapacity(Infinity); // every buffer of the page, counted on its own
    const { tvmHoldings: holdings } = await import("/tests/browser/tvm-models.js" as string);
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const tvm = await loadTvmModels();
    const binding = adapters.bindTvmToContext(tvm, ctx);
    const lent = new Set<GPUBuffer>();
    const steps: Record<string, unknown>[] = [];
    const step = (name: string): void => {
      const m = ctx.memory(0);
      const row = m.owners.find((o: { owner: string }) => o.owner === "tvmjs");
      const h = holdings(tvm, lent);
      steps.push({
        name,
        row: row?.bytes ?? 0,
        rowBuffers: row?.buffers ?? 0,
        ...h,
        ownersSum: m.owners.reduce((n: number, o: { bytes: number }) => n + o.bytes, 0),
        total: m.totalBytes,
        device: tally.held,
      });
    };
    step("bound");
    const vm = createTvmVm(tvm); // uploads the model's constants
    step("vm");
    // A webdlpack tensor lent to tvmjs: in tvmjs's table, but webdlpack's bytes.
    const ptr = await ctx.allocWebGPUChecked(128);
    ctx.getWebGPUDevice(0).queue.writeBuffer(ctx.gpuPointerToBuffer(ptr), 0, new Float32Array(32).fill(0.5));
    const g = webdlpack.Tensor.webgpu({
      pointer: ptr,
      deviceId: 0,
      dtype: "float32",
      shape: [4, 8],
      onRelease: () => ctx.freeWebGPU(ptr),
    });
    lent.add(ctx.gpuPointerToBuffer(ptr));
    const tx = await binding.tensorToTvm(g);
    tvm.beginScope();
    const y = binding.tensorFromTvm(vm.getFunction("mlp")(tx)); // tvmjs's output, adopted by webdlpack
    tvm.endScope();
    step("mlp");
    // 1 MiB in, 1 MiB out, read back through tvmjs (its read staging pool).
    const n = 262144;
    tvm.beginScope();
    const x = tvm.empty([n], "float32", tvm.webgpu());
    x.copyFrom(new Float32Array(n).fill(-2));
    const out = tvm.detachFromCurrentScope(vm.getFunction("relu")(x));
    const host = tvm.detachFromCurrentScope(tvm.empty([n], "float32", tvm.cpu()));
    host.copyFrom(out);
    tvm.endScope();
    await tvm.webgpu().sync();
    const zeros = host.toArray().every((v: number) => v === 0);
    step("relu");
    for (const t of [out, host]) t.dispose();
    y.dispose();
    tx.dispose();
    g.dispose();
    lent.clear();
    vm.dispose(); // its registers let go of the last outputs: their buffers go back to the pool
    tvm.lib.webGPUContext.flushCommands();
    step("disposed");
    const trimmed = await ctx.trimMemory(0); // webdlpack's caches, then tvmjs's handler: its VM pool is cleared
    step("trimmed");
    return { steps, zeros, trimmed };
  });
  expect(r.zeros).toBe(true);
  for (const s of r.steps) {
    expect(s.row, `${s.name}: the tvmjs row is what tvmjs holds`).toBe(s.held);
    expect(s.table, `${s.name}: tvmjs's own count of its table`).toBe(s.allocated);
    expect(s.ownersSum, `${s.name}: the owners add up`).toBe(s.total);
    expect(s.total, `${s.name}: what the device holds`).toBe(s.device);
  }
  const at = Object.fromEntries(r.steps.map((s) => [s.name, s]));
  expect(at.vm.row).toBeGreaterThan(at.bound.row); // the constants (weight 8x8, bias)
  expect(at.relu.row - at.mlp.row).toBeGreaterThanOrEqual(2 * 1048576); // the output (the input is freed), read staging
  expect(at.relu.staging).toBeGreaterThanOrEqual(1048576);
  // After disposing, the VM's pool still holds the outputs and tvmjs keeps its read staging; trimming gives both back.
  expect(at.disposed.row - at.trimmed.row).toBeGreaterThanOrEqual(2 * 1048576);
  expect(at.trimmed.staging).toBe(0);
  expect(r.trimmed).toBeGreaterThanOrEqual(at.disposed.row - at.trimmed.row);
});

test("under setup({memoryBudget}) tvmjs gives back its pool and staging: for webdlpack, for the page, and inside its own allocations", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, loadTvmModels, createTvmVm } = window as any;
    const { limitDeviceCapacity } = await import("/tests/browser/device-capacity.js" as string);
    const MiB = 1048576;
    const budget = 32 * MiB;
    const tally = limitDeviceCapacity(budget); // the device itself refuses past the budget
    const { tvmHoldings: holdings } = await import("/tests/browser/tvm-models.js" as string);
    const ctx = webdlpack.getContext();
    await ctx.setup({ memoryBudget: budget });
    const tvm = await loadTvmModels();
    adapters.bindTvmToContext(tvm, ctx);
    const vm = createTvmVm(tvm);
    const relu = tvm.withNewScope(() => tvm.detachFromCurrentScope(vm.getFunction("relu")));
    /**
     * relu of `fill` on `mib` MiB of float32 in tvmjs (input freed at the scope's end, output back to the VM's pool,
     * read back through tvmjs's staging); whether every output value is right.
     */
    const run = async (mib: number, fill: number): Promise<boolean> => {
      const n = (mib * MiB) / 4;
      tvm.beginScope();
      const x = tvm.empty([n], "float32", tvm.webgpu());
      x.copyFrom(new Float32Array(n).fill(fill));
      const host = tvm.detachFromCurrentScope(tvm.empty([n], "float32", tvm.cpu()));
      host.copyFrom(relu(x));
      tvm.endScope();
      await tvm.webgpu().sync();
      const want = Math.max(fill, 0);
      const ok = host.toArray().every((v: number) => v === want);
      host.dispose();
      tvm.lib.webGPUContext.flushCommands();
      return ok;
    };
    const events: Record<string, number | string>[] = [];
    const note = (name: string): void => {
      const m = ctx.memory(0);
      const h = holdings(tvm);
      events.push({
        name,
        tvmjs: m.owners.find((o: { owner: string }) => o.owner === "tvmjs")?.bytes ?? 0,
        held: h.held,
        staging: h.staging,
        total: m.totalBytes,
        device: tally.held,
        pressureEvents: m.pressureEvents,
      });
    };
    const ok: boolean[] = [];
    ok.push(await run(4, 3));
    note("pooled"); // tvmjs: the 4 MiB output in its VM's pool, 4 MiB of read staging
    // 1. webdlpack's checked allocation (async path): 24 MiB fits only once tvmjs gave something back.
    const a = await ctx.allocWebGPUChecked(24 * MiB);
    note("webdlpack 24 MiB");
    ctx.freeWebGPU(a);
    await ctx.trimMemory(0);
    ok.push(await run(4, -1));
    note("pooled again");
    // 2. The page's own createBuffer (synchronous: the handler runs inside it).
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    const b = device.createBuffer({ size: 24 * MiB, usage: GPUBufferUsage.STORAGE });
    note("page 24 MiB");
    b.destroy();
    // 3. tvmjs's own allocations crossing the budget (6 MiB output, 6 MiB staging; 12 MiB held by the page): its
    //    pool and its staging are freed from inside its allocator, and the run goes on.
    ok.push(await run(4, 2));
    const c = device.createBuffer({ size: 12 * MiB, usage: GPUBufferUsage.STORAGE });
    note("before");
    ok.push(await run(6, 5));
    note("tvmjs under pressure");
    c.destroy();
    relu.dispose();
    vm.dispose();
    return { ok, events, refused: tally.refused, peak: tally.peak, budget, errors: ctx.memory(0).outOfMemoryErrors };
  });
  expect(r.ok).toEqual([true, true, true, true]);
  expect(r.refused).toBe(0); // the device never refused: room was made first
  expect(r.errors).toBe(0);
  expect(r.peak).toBeLessThanOrEqual(r.budget);
  const MiB = 1048576;
  const at = Object.fromEntries(r.events.map((e) => [e.name, e]));
  for (const e of r.events) {
    expect(e.tvmjs, `${e.name}: the tvmjs row is what tvmjs holds`).toBe(e.held);
    expect(e.total, `${e.name}: what the device holds`).toBe(e.device);
  }
  expect(at.pooled.tvmjs).toBeGreaterThanOrEqual(8 * MiB);
  for (const [before, after] of [
    ["pooled", "webdlpack 24 MiB"],
    ["pooled again", "page 24 MiB"],
  ] as const) {
    expect(Number(at[before].tvmjs) - Number(at[after].tvmjs), `${after}: tvmjs gave back`).toBeGreaterThanOrEqual(
      4 * MiB,
    );
    expect(at[after].pressureEvents).toBeGreaterThan(Number(at[before].pressureEvents));
  }
  expect(at["tvmjs under pressure"].pressureEvents).toBeGreaterThan(Number(at.before.pressureEvents));
  expect(at["tvmjs under pressure"].staging).toBe(6 * MiB); // its old 4 MiB staging made room for the new one
});
