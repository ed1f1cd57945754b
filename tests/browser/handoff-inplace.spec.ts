/**
 * tvmjs functions that write their input (issue 35, items 2 and 5), in real Chromium with the in-place test model
 * (`add_one_inplace`: x += 1 through R.call_tir_inplace, scripts/tvm/make_inplace_model.py):
 * - a tensor lent to tvmjs reads x + 1 straight after the call: every read and hand-off first submits what tvmjs
 *   recorded (queue-users.ts);
 * - the call's output (the lent input itself) becomes a Tensor over the same pointer, sharing the lease;
 * - a READ_ONLY tensor is never written: tvmjs gets a copy (stated, counted), `copy: "never"` refuses it
 *   (COPY_REQUIRED naming tensor.flags.readOnly), `mayWrite: false` lends it; a TF.js result stays TF.js's.
 */
import { frameworksTest as test, expect } from "./fixtures.js";

test("an in-place tvmjs call: the lent tensor reads x + 1 at once; its output is a Tensor over the same pointer sharing the lease", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, loadTvmInplaceModel, createTvmVm, testkit } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const tvm = await loadTvmInplaceModel();
    const binding = adapters.bindTvmToContext(tvm, ctx);
    const vm = createTvmVm(tvm);
    const addOne = tvm.withNewScope(() => tvm.detachFromCurrentScope(vm.getFunction("add_one_inplace")));
    const baseline = { pointers: ctx.stats().livePointers, produced: adapters.liveProducedTensors() };
    const x = await testkit.gpuTensor(ctx, [1, 2, 3, 4], [4]);
    const tx = await binding.tensorToTvm(x);
    const lentInPlace = adapters.handoffInfo(tx).zeroCopy;
    tvm.beginScope();
    const out = addOne(tx); // recorded by tvmjs, not submitted yet
    // The read right after the call: tvmjs's recorded work is submitted first.
    const straightAfter = Array.from(new Float32Array(await ctx.readback(x.data)));
    const y = binding.tensorFromTvm(out);
    const samePointer = y.data === x.data;
    const shape = [...y.shape];
    const yFlags = { readOnly: y.flags.readOnly, isCopied: y.flags.isCopied };
    // A second call through the same tvmjs tensor, then a hand-off of the output: x + 2, read through y.
    addOne(tx).dispose();
    tvm.endScope(); // y's tvmjs tensor was taken out of the scope
    const viaOutput = Array.from(await adapters.readTensor(y));
    // The lease: x disposed first, then tvmjs's tensor; y still reads; the last holder frees the pointer.
    x.dispose();
    tx.dispose();
    const afterSourceGone = Array.from(await adapters.readTensor(y));
    const lentWhileY = binding.lentBuffers();
    y.dispose();
    addOne.dispose();
    vm.dispose();
    return {
      lentInPlace,
      straightAfter,
      samePointer,
      shape,
      yFlags,
      viaOutput,
      afterSourceGone,
      lentWhileY,
      lentAfter: binding.lentBuffers(),
      outHandle: out.getHandle(false),
      leftoverPointers: ctx.stats().livePointers - baseline.pointers,
      leftoverProduced: adapters.liveProducedTensors() - baseline.produced,
    };
  });
  expect(r.lentInPlace).toBe(true);
  expect(r.straightAfter).toEqual([2, 3, 4, 5]);
  expect(r.samePointer).toBe(true);
  expect(r.shape).toEqual([4]);
  expect(r.yFlags).toEqual({ readOnly: false, isCopied: false });
  expect(r.viaOutput).toEqual([3, 4, 5, 6]);
  expect(r.afterSourceGone).toEqual([3, 4, 5, 6]);
  expect(r.outHandle).toBe(0); // y's release disposed tvmjs's output tensor
  expect(r.lentAfter).toBe(0);
  expect(r.leftoverPointers).toBe(0);
  expect(r.leftoverProduced).toBe(0);
});

test("READ_ONLY into tvmjs: copied (stated, counted) and never written; 'never' refuses; mayWrite: false lends; a TF.js result stays TF.js's", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, loadTvmInplaceModel, createTvmVm, tf, WebGPUBackend, testkit } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    await adapters.registerTfjsWebGPUBackend(tf, WebGPUBackend, ctx);
    tf.env().set("WEBGPU_CPU_FORWARD", false); // small ops on the GPU too: the result is in TF.js's own buffer
    const tvm = await loadTvmInplaceModel();
    const binding = adapters.bindTvmToContext(tvm, ctx);
    const vm = createTvmVm(tvm);
    const addOne = tvm.withNewScope(() => tvm.detachFromCurrentScope(vm.getFunction("add_one_inplace")));
    const baseline = { pointers: ctx.stats().livePointers, produced: adapters.liveProducedTensors() };
    const copies0 = adapters.tvmCopyStats();
    const read = async (t: unknown) => Array.from(await adapters.readTensor(t));
    // A READ_ONLY webdlpack tensor.
    const ro = await testkit.gpuTensor(ctx, [10, 20, 30, 40], [4], { readOnly: true });
    const never = await testkit.failure(() => binding.tensorToTvm(ro, { copy: "never" }));
    const tro = await binding.tensorToTvm(ro);
    const info = adapters.handoffInfo(tro);
    const copies1 = adapters.tvmCopyStats();
    tvm.beginScope();
    const y = binding.tensorFromTvm(addOne(tro));
    tvm.endScope();
    const roAfter = await read(ro);
    const yValues = await read(y);
    const yFlags = { readOnly: y.flags.readOnly, isCopied: y.flags.isCopied, sameAsSource: y.data === ro.data };
    y.dispose();
    tro.dispose();
    // mayWrite: false — the caller promises only reads: lent as it is.
    const lent = await binding.tensorToTvm(ro, { mayWrite: false });
    const lentInfo = adapters.handoffInfo(lent);
    lent.dispose();
    ro.dispose();
    // The case: a TF.js result (READ_ONLY) through an in-place function; TF.js's data must not change.
    const a = tf.add(tf.tensor1d([1, 2, 3, 4]), 1); // [2, 3, 4, 5]
    const fromTf = await adapters.tensorFromTfjs(tf, a);
    const tfFlags = fromTf.flags.readOnly;
    const ta = await binding.tensorToTvm(fromTf);
    const taInfo = adapters.handoffInfo(ta);
    tvm.beginScope();
    const z = binding.tensorFromTvm(addOne(ta));
    tvm.endScope();
    const zValues = await read(z);
    const tfData = Array.from(await a.data());
    for (const t of [z, ta, fromTf]) t.dispose();
    a.dispose();
    const copies2 = adapters.tvmCopyStats();
    addOne.dispose();
    vm.dispose();
    return {
      never: { code: never.code, field: never.field, value: never.value },
      info,
      counted: [copies1.count - copies0.count, copies1.bytes - copies0.bytes, copies2.count - copies0.count],
      roAfter,
      yValues,
      yFlags,
      lentInfo,
      tfFlags,
      taInfo,
      zValues,
      tfData,
      lentAfter: binding.lentBuffers(),
      leftoverPointers: ctx.stats().livePointers - baseline.pointers,
      leftoverProduced: adapters.liveProducedTensors() - baseline.produced,
    };
  });
  expect(r.never).toEqual({ code: "COPY_REQUIRED", field: "tensor.flags.readOnly", value: true });
  expect(r.info).toEqual({
    zeroCopy: false,
    isCopied: true,
    reason: "the tensor is READ_ONLY and tvmjs may write its input",
  });
  expect(r.counted).toEqual([1, 16, 2]);
  expect(r.roAfter).toEqual([10, 20, 30, 40]); // the READ_ONLY source: never written
  expect(r.yValues).toEqual([11, 21, 31, 41]); // the in-place result, in the copy
  expect(r.yFlags).toEqual({ readOnly: false, isCopied: false, sameAsSource: false });
  expect(r.lentInfo).toEqual({ zeroCopy: true, isCopied: false, reason: null });
  expect(r.tfFlags).toBe(true);
  expect(r.taInfo.isCopied).toBe(true);
  expect(r.zValues).toEqual([3, 4, 5, 6]);
  expect(r.tfData).toEqual([2, 3, 4, 5]); // TF.js's tensor is unchanged
  expect(r.lentAfter).toBe(0);
  expect(r.leftoverPointers).toBe(0);
  expect(r.leftoverProduced).toBe(0);
});
