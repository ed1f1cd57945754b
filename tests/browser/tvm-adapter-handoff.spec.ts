/**
 * The tvmjs adapter's hand-off rules, in real Chromium with the TVM test models (tests/browser/frameworks.html):
 * two outputs out of one call, each its own GPUBuffer; the lent buffer-table slot released exactly once
 * (when tvmjs drops the tensor, and when tvmjs's instance is disposed); copies counted and stated
 * (CPU data, a tensor at a byte offset); typed errors for a foreign device, a dtype WGSL lacks, a bad shape.
 */
import { frameworksTest as test, expect } from "./fixtures.js";

test("two outputs of one tvmjs call become two webdlpack tensors over their own GPUBuffers, values match NumPy", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, loadTvmModels, createTvmVm } = window as any;
    const ref = await (await fetch("/tests/data/tvm_chain_reference.json")).json();
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const tvm = await loadTvmModels();
    const binding = adapters.bindTvmToContext(tvm, ctx);
    const gpu = tvm.lib.webGPUContext;
    const vm = createTvmVm(tvm);
    const baseline = { pointers: ctx.stats().livePointers, produced: adapters.liveProducedTensors() };
    const x = webdlpack.Tensor.fromTypedArray(Float32Array.from(ref.input.flat()), { shape: [4, 8] });
    const ptr = await ctx.allocWebGPUChecked(128);
    ctx.getWebGPUDevice(0).queue.writeBuffer(ctx.gpuPointerToBuffer(ptr), 0, x.view);
    const g = webdlpack.Tensor.webgpu({
      pointer: ptr,
      deviceId: 0,
      dtype: "float32",
      shape: [4, 8],
      onRelease: () => ctx.freeWebGPU(ptr),
    });
    const tx = await binding.tensorToTvm(g);
    tvm.beginScope();
    const pair = vm.getFunction("two_outputs")(tx);
    const [a, b] = [pair.get(0), pair.get(1)];
    const outs = [binding.tensorFromTvm(a), binding.tensorFromTvm(b)];
    const same = [
      ctx.gpuPointerToBuffer(outs[0].data) === gpu.gpuBufferFromPtr(a.getDataPtr()),
      ctx.gpuPointerToBuffer(outs[1].data) === gpu.gpuBufferFromPtr(b.getDataPtr()),
    ];
    const distinct = outs[0].data !== outs[1].data && same.length === 2;
    tvm.endScope(); // disposes the tuple; the adopted elements stay alive
    const shapes = outs.map((t: { shape: number[] }) => [...t.shape]);
    const values: number[][] = [];
    for (const t of outs)
      values.push(Array.from(new Float32Array(await ctx.readback(t.data, { byteLength: t.nbytes }))));
    const maxErr = [ref.two_outputs[0].flat(), ref.two_outputs[1]].map((want: number[], i: number) =>
      Math.max(...want.map((v, j) => Math.abs(v - values[i]![j]!))),
    );
    for (const t of [...outs, tx, g, x]) t.dispose();
    const released = [a.handle, b.handle];
    vm.dispose();
    return {
      same,
      distinct,
      shapes,
      maxErr,
      released,
      lent: binding.lentBuffers(),
      leftoverPointers: ctx.stats().livePointers - baseline.pointers,
      leftoverProduced: adapters.liveProducedTensors() - baseline.produced,
    };
  });
  expect(r.same).toEqual([true, true]);
  expect(r.distinct).toBe(true);
  expect(r.shapes).toEqual([[4, 8], [4]]);
  expect(r.maxErr[0]).toBeLessThan(1e-5);
  expect(r.maxErr[1]).toBeLessThan(1e-5);
  expect(r.released).toEqual([0, 0]);
  expect(r.lent).toBe(0);
  expect(r.leftoverPointers).toBe(0);
  expect(r.leftoverProduced).toBe(0);
});

test("a lent slot releases its source exactly once: when tvmjs drops the tensor, or when tvmjs is disposed (buffer kept)", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, loadTvmModels } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    const tvm = await loadTvmModels();
    const binding = adapters.bindTvmToContext(tvm, ctx);
    const gpu = tvm.lib.webGPUContext;
    let released = 0;
    const make = async () => {
      const ptr = await ctx.allocWebGPUChecked(16);
      device.queue.writeBuffer(ctx.gpuPointerToBuffer(ptr), 0, Float32Array.from([1, 2, 3, 4]));
      return webdlpack.Tensor.webgpu({
        pointer: ptr,
        deviceId: 0,
        dtype: "float32",
        shape: [4],
        onRelease: () => {
          released++;
          ctx.freeWebGPU(ptr);
        },
      });
    };
    // 1. The caller disposes the webdlpack tensor first: tvmjs still holds the buffer.
    const a = await make();
    const ta = await binding.tensorToTvm(a);
    const slot = ta.getDataPtr();
    a.dispose();
    const afterSourceDispose = { released, lent: binding.lentBuffers() };
    ta.dispose();
    ta.dispose(); // a second dispose is tvmjs's no-op
    const afterTvmDispose = { released, lent: binding.lentBuffers(), slotCleared: gpu.bufferTable[slot] === undefined };
    // 2. tvmjs's instance goes away while it holds a lent buffer: released once, the buffer not destroyed.
    const b = await make();
    const tb = await binding.tensorToTvm(b);
    const bBuffer: GPUBuffer = ctx.gpuPointerToBuffer(b.data);
    void tb;
    tvm.dispose();
    const afterInstanceDispose = { released, lent: binding.lentBuffers() };
    const stillReadable = Array.from(new Float32Array(await ctx.readback(b.data, { byteLength: 16 })));
    b.dispose();
    return {
      afterSourceDispose,
      afterTvmDispose,
      afterInstanceDispose,
      stillReadable,
      bufferSize: bBuffer.size,
      finalReleased: released,
      guardOwners: ctx.stats().devices[0].guardOwners,
      leaks: ctx.leaks().length,
    };
  });
  expect(r.afterSourceDispose).toEqual({ released: 0, lent: 1 });
  expect(r.afterTvmDispose).toEqual({ released: 1, lent: 0, slotCleared: true });
  expect(r.afterInstanceDispose).toEqual({ released: 1, lent: 0 });
  expect(r.stillReadable).toEqual([1, 2, 3, 4]);
  expect(r.finalReleased).toBe(2);
  expect(r.leaks).toBe(0);
});

test("copies are counted and stated: CPU data into tvmjs's memory, a GPU tensor at a byte offset; 'never' refuses", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, loadTvmModels, testkit } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const tvm = await loadTvmModels();
    const binding = adapters.bindTvmToContext(tvm, ctx);
    const before = adapters.tvmCopyStats();
    const cpu = webdlpack.Tensor.fromTypedArray(Float32Array.from([1.5, -2, 3.25, 4]), { shape: [2, 2] });
    const tc = await binding.tensorToTvm(cpu);
    const cpuInfo = adapters.handoffInfo(tc);
    const cpuValues = Array.from(tc.toArray());
    const cpuDevice = tc.device.deviceType;
    tc.dispose();
    const cpuNever = await testkit.failure(() => binding.tensorToTvm(cpu, { copy: "never" }));
    const ptr = await ctx.allocWebGPUChecked(512);
    const off = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [4], byteOffset: 256 });
    const to = await binding.tensorToTvm(off);
    const offInfo = adapters.handoffInfo(to);
    const offSame = tvm.lib.webGPUContext.gpuBufferFromPtr(to.getDataPtr()) === ctx.gpuPointerToBuffer(ptr);
    const offNever = await testkit.failure(() => binding.tensorToTvm(off, { copy: "never" }));
    to.dispose();
    off.dispose();
    ctx.freeWebGPU(ptr);
    const after = adapters.tvmCopyStats();
    cpu.dispose();
    return {
      cpuInfo,
      cpuValues,
      cpuDevice,
      cpuNever: cpuNever.code,
      offInfo,
      offSame,
      offNever: offNever.code,
      copies: after.count - before.count,
      bytes: after.bytes - before.bytes,
      lent: binding.lentBuffers(),
    };
  });
  expect(r.cpuInfo).toMatchObject({ zeroCopy: false, isCopied: true });
  expect(r.cpuInfo.reason).toContain("wasm memory");
  expect(r.cpuValues).toEqual([1.5, -2, 3.25, 4]);
  expect(r.cpuDevice).toBe(1);
  expect(r.cpuNever).toBe("COPY_REQUIRED");
  expect(r.offInfo).toMatchObject({ zeroCopy: false, isCopied: true });
  expect(r.offInfo.reason).toContain("byte_offset 256");
  expect(r.offSame).toBe(false);
  expect(r.offNever).toBe("COPY_REQUIRED");
  expect(r.copies).toBe(2);
  expect(r.bytes).toBe(32);
  expect(r.lent).toBe(0);
});

test("typed errors: tvmjs on another device (BAD_DEVICE both ways), a dtype WGSL lacks, a bad shape, a small buffer", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, loadTvmModels, createTvmVm, testkit } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const own = await (await navigator.gpu.requestAdapter())!.requestDevice();
    const foreign = await loadTvmModels();
    foreign.initWebGPU(own); // tvmjs on a device of its own
    const bindForeign = await testkit.failure(() => adapters.bindTvmToContext(foreign, ctx));
    const ptr = await ctx.allocWebGPUChecked(16);
    const g = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [4] });
    const toForeign = await testkit.failure(() => adapters.tensorToTvm(foreign, g, { ctx }));
    const vm = createTvmVm(foreign);
    foreign.beginScope();
    const foreignOut = foreign.empty([4], "float32", foreign.webgpu());
    const fromForeign = await testkit.failure(() => adapters.tensorFromTvm(foreignOut, { ctx }));
    foreign.endScope();
    vm.dispose();
    const tvm = await loadTvmModels();
    const binding = adapters.bindTvmToContext(tvm, ctx);
    const ptr64 = await ctx.allocWebGPUChecked(32);
    const f64 = webdlpack.Tensor.webgpu({ pointer: ptr64, deviceId: 0, dtype: "float64", shape: [4] });
    const dtype = await testkit.failure(() => binding.tensorToTvm(f64));
    // tvmjs tensors as the adapter sees them, with a shape no tensor may have / more bytes than the buffer.
    tvm.beginScope();
    const real = tvm.empty([4], "float32", tvm.webgpu());
    const like = (shape: number[]) => ({
      dtype: "float32",
      shape,
      device: real.device,
      lib: real.lib,
      getHandle: () => real.getHandle(false),
      getDataPtr: () => real.getDataPtr(),
      dispose: () => undefined,
    });
    const badShape = await testkit.failure(() => binding.tensorFromTvm(like([4, -2])));
    const small = await testkit.failure(() => binding.tensorFromTvm(like([1024, 1024])));
    tvm.endScope();
    const notTvm = await testkit.failure(() => adapters.bindTvmToContext({}, ctx));
    for (const t of [g, f64]) t.dispose();
    ctx.freeWebGPU(ptr);
    ctx.freeWebGPU(ptr64);
    own.destroy();
    return {
      bindForeign,
      toForeign,
      fromForeign,
      dtype,
      badShape,
      small,
      notTvm: notTvm.code,
      produced: adapters.liveProducedTensors(),
      lent: binding.lentBuffers(),
    };
  });
  expect(r.bindForeign).toMatchObject({ code: "BAD_DEVICE", field: "tvm.lib.webGPUContext" });
  expect(r.toForeign).toMatchObject({ code: "BAD_DEVICE", field: "tvm.lib.webGPUContext" });
  expect(r.fromForeign).toMatchObject({ code: "BAD_DEVICE", field: "tvmTensor.lib.webGPUContext" });
  expect(r.dtype).toMatchObject({ code: "UNSUPPORTED", field: "tensor.dtype", value: "float64" });
  expect(r.badShape).toMatchObject({ code: "BAD_SHAPE" });
  expect(r.badShape.field).toContain("tvmTensor.shape");
  expect(r.small).toMatchObject({ code: "OUT_OF_BOUNDS" });
  expect(r.notTvm).toBe("INVALID_ARGUMENT");
  expect(r.produced).toBe(0);
  expect(r.lent).toBe(0);
});
