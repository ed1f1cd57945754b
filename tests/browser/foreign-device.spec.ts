/**
 * A GPUBuffer made on another GPUDevice (issue 21, item 1), in real Chromium (SwiftShader): every path that
 * adopts one refuses it with BAD_DEVICE naming both devices before anything reads it, and a readback never
 * returns bytes that are not the buffer's — before, `readTensor` returned 0,0,0,0 for a buffer of 7s.
 * Also: a buffer its maker destroyed after adoption makes a readback reject instead of returning zeros.
 */
import { cachedTest as test, expect, openAdaptersPage } from "./fixtures.js";

test.beforeEach(async ({ page }) => {
  await openAdaptersPage(page);
});

test("tensorFromGPUBuffer / registerGPUBuffer of another GPUDevice's buffer: readTensor, copyGPUTensor and ctx.readback reject with BAD_DEVICE naming both devices; the page's own buffer reads right", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    const adapter = await navigator.gpu.requestAdapter();
    const other = await adapter!.requestDevice({ label: "someone else's device" });
    const sevens = new Float32Array(16).fill(7);
    const make = (on: GPUDevice, usage: number, label: string): GPUBuffer => {
      const b = on.createBuffer({ size: 64, usage, label, mappedAtCreation: true });
      new Float32Array(b.getMappedRange()).set(sevens);
      b.unmap();
      return b;
    };
    const { STORAGE, COPY_SRC, COPY_DST } = GPUBufferUsage;
    const outcome = async (fn: () => Promise<unknown>): Promise<Record<string, unknown>> => {
      try {
        const v = await fn();
        return { ok: Array.from(v as ArrayLike<number>) };
      } catch (e) {
        const err = e as { code?: string; field?: string; message: string; cause?: { message?: string } };
        const said = err.message.indexOf("WebGPU said:");
        return {
          code: err.code,
          field: err.field,
          // What happened first, WebGPU's first line after it, its whole text as the cause.
          saysFirst: /^\[BAD_DEVICE\] [^:]+: the GPUBuffer "[^"]+" was made by another GPUDevice/.test(err.message),
          webgpuAfter: said > err.message.indexOf("Make the buffer on") && !err.message.includes(" - While"),
          causeKept: String(err.cause?.message).includes("someone else's device"),
          namesOurs: err.message.includes('"webdlpack device 0"'),
          namesTheirs: err.message.includes("someone else's device"),
          suggests: err.message.includes("ctx.getWebGPUDevice(0)"),
        };
      }
    };
    const cases: Record<string, Record<string, unknown>> = {};
    // The case, read at once: the check has not answered yet when readTensor starts.
    for (const [name, usage] of [
      ["copyDst", STORAGE | COPY_SRC | COPY_DST],
      ["noCopyDst", STORAGE | COPY_SRC], // as ORT and TF.js make theirs
    ] as const) {
      const foreign = make(other, usage, `foreign ${name}`);
      const t = adapters.tensorFromGPUBuffer(foreign, { dtype: "float32", shape: [16] });
      cases[`readTensor ${name}`] = await outcome(() => adapters.readTensor(t));
      cases[`copyGPUTensor ${name}`] = await outcome(() => adapters.copyGPUTensor(t));
      cases[`after ${name}`] = await outcome(async () => ctx.gpuPointerToBuffer(t.data) && [1]);
      t.dispose();
      foreign.destroy();
    }
    const foreign = make(other, STORAGE | COPY_SRC | COPY_DST, "foreign registered");
    const p = ctx.registerGPUBuffer(foreign);
    cases["ctx.readback"] = await outcome(async () => new Float32Array(await ctx.readback(p)));
    const into = new Float32Array(16);
    cases["ctx.readbackInto"] = await outcome(async () => {
      await ctx.readbackInto(p, into);
      return into;
    });
    ctx.freeWebGPU(p);
    foreign.destroy();
    // The page's own buffer, adopted the same way, reads its 7s.
    const own = make(device, STORAGE | COPY_SRC, "own");
    const mine = adapters.tensorFromGPUBuffer(own, { dtype: "float32", shape: [4], owned: true });
    cases.own = await outcome(() => adapters.readTensor(mine));
    mine.dispose();
    other.destroy();
    return { cases, live: ctx.stats().livePointers };
  });
  const refused = {
    code: "BAD_DEVICE",
    field: "buffer",
    saysFirst: true,
    webgpuAfter: true,
    causeKept: true,
    namesOurs: true,
    namesTheirs: true,
    suggests: true,
  };
  for (const name of ["copyDst", "noCopyDst"]) {
    expect(r.cases[`readTensor ${name}`], name).toEqual(refused);
    expect(r.cases[`copyGPUTensor ${name}`], name).toEqual(refused);
    expect(r.cases[`after ${name}`], name).toEqual(refused);
  }
  expect(r.cases["ctx.readback"]).toEqual(refused);
  expect(r.cases["ctx.readbackInto"]).toEqual(refused);
  expect(r.cases.own).toEqual({ ok: [7, 7, 7, 7] });
  expect(r.live).toBe(0);
});

test("a buffer its maker destroys after adoption: the readback rejects (DISPOSED, destroyed) instead of returning zeros", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    const { STORAGE, COPY_SRC, COPY_DST } = GPUBufferUsage;
    const buffer = device.createBuffer({ size: 64, usage: STORAGE | COPY_SRC | COPY_DST });
    const t = adapters.tensorFromGPUBuffer(buffer, { dtype: "float32", shape: [16] });
    await adapters.readTensor(t); // verified usable
    buffer.destroy(); // e.g. a framework reusing or freeing its output
    let outcome: unknown;
    try {
      outcome = Array.from(await adapters.readTensor(t));
    } catch (e) {
      const err = e as { code?: string; field?: string; message: string };
      outcome = { code: err.code, field: err.field, destroyed: /destroyed/.test(err.message) };
    }
    t.dispose();
    return outcome;
  });
  expect(r).toEqual({ code: "DISPOSED", field: "buffer", destroyed: true });
});
