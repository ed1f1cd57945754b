/**
 * The whole stack inside a dedicated module Worker (tests/browser/worker.html + worker-stack.worker.js), and what
 * crosses between the page and the worker: CPU tensors (transfer, copy, shared — the shared path on a page served
 * with COOP/COEP under /__isolated/), never GPU pointers (each context refuses another context's pointers).
 */
import { test, expect, type Page } from "@playwright/test";
import type * as WDL from "../../js/src/index.js";
import type * as WDLTesting from "../../js/src/testing/index.js";

/** The page's globals (worker.html). */
interface WorkerPage {
  webdlpack: typeof WDL;
  webdlpackTesting: typeof WDLTesting;
  workerReady: Promise<boolean>;
  workerCall(op: string, args?: object, transfer?: Transferable[]): Promise<unknown>;
}

interface Loaded {
  inWorker: boolean;
  crossOriginIsolated: boolean;
  deviceInfo: WDL.DeviceInfo;
  adapterFeatures: string[];
  python?: string;
  ms: Record<string, number>;
}

/** Open the worker page at `path` and run `op` in its worker: "load" (everything) or "setup" (context and device only). */
async function openWorkerPage(
  page: Page,
  path = "/tests/browser/worker.html",
  op: "load" | "setup" = "load",
): Promise<Loaded> {
  page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") console.log(`[console error] ${msg.text()}`);
  });
  await page.goto(path);
  await page.waitForFunction(() => (window as unknown as { workerReady?: unknown }).workerReady !== undefined);
  await page.evaluate(() => (window as unknown as WorkerPage).workerReady);
  return page.evaluate((name) => (window as unknown as WorkerPage).workerCall(name), op) as Promise<Loaded>;
}

test("Pyodide, webdlpack, ORT-web and TF.js in one Worker: setup, Python ⇄ JS, ORT → TF.js on the worker's device, one readback", async ({
  page,
}) => {
  const loaded = await openWorkerPage(page);
  expect(loaded.inWorker).toBe(true);
  expect(loaded.python).toMatch(/^3\.\d+/);
  expect(loaded.deviceInfo.id).toBe(0);
  expect(loaded.deviceInfo.adapterInfo?.architecture).toBe("swiftshader");
  const r = (await page.evaluate(() => (window as unknown as WorkerPage).workerCall("exchange"))) as {
    steps: Record<string, number>;
    checks: Record<string, unknown>;
  };
  expect(r.checks).toMatchObject({
    pythonToJsSameHeap: true,
    pythonToJsValues: true,
    jsToPythonValues: [1.5, -2, 3.25],
    ortInputSameBuffer: true,
    ortOutputSameBuffer: true,
    tfjsInputSameBuffer: true,
    gpuReadBytesBeforeReadback: 0,
    leftoverPointers: 0,
    leftoverTfjsTensors: 0,
    pythonLiveExports: 0,
  });
  expect(r.checks["gpuReadBytes"]).toBe(r.checks["nbytes"]); // the one readback, nothing else left the GPU
  expect(r.checks["maxError"] as number).toBeLessThan(1e-5);
  console.log(
    `worker load (ms): ${JSON.stringify(loaded.ms, (_, v) => (typeof v === "number" ? Math.round(v * 10) / 10 : v))}`,
  );
  console.log(
    `worker steps (ms): ${JSON.stringify(r.steps, (_, v) => (typeof v === "number" ? Math.round(v * 100) / 100 : v))}`,
  );
});

test("setup() asks for the adapter's ML features it has (shader-f16, subgroups), in a worker as on the page", async ({
  page,
}) => {
  const loaded = await openWorkerPage(page, undefined, "setup");
  const onPage = await page.evaluate(async () => {
    const info = await (window as unknown as WorkerPage).webdlpack.getContext().setup();
    const adapter = await navigator.gpu.requestAdapter();
    return { info, adapterFeatures: [...adapter!.features].sort() };
  });
  for (const { info, adapterFeatures } of [
    { info: loaded.deviceInfo, adapterFeatures: loaded.adapterFeatures },
    onPage,
  ]) {
    expect(info.requestedFeatures).toEqual(["shader-f16", "subgroups"].filter((f) => adapterFeatures.includes(f)));
    for (const f of info.requestedFeatures) expect(info.features).toContain(f);
  }
  // SwiftShader has subgroups but no shader-f16.
  expect(onPage.adapterFeatures).toContain("subgroups");
  expect(onPage.adapterFeatures).not.toContain("shader-f16");
  expect(onPage.info.requestedFeatures).toEqual(["subgroups"]);
});

test("a GPU pointer never resolves in another context: page ↔ worker pointers are refused, saying so", async ({
  page,
}) => {
  await openWorkerPage(page, undefined, "setup");
  const r = await page.evaluate(async () => {
    const { webdlpack, workerCall } = window as unknown as WorkerPage;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const pagePtr = await ctx.allocWebGPU(64, { owner: "page" });
    const workerPtr = (await workerCall("alloc", { nbytes: 64 })) as number;
    const inWorker = (await workerCall("resolve", { ptr: pagePtr })) as {
      resolved: boolean;
      code: string;
      message: string;
    };
    let onPage: { code: string; message: string } | null = null;
    try {
      ctx.gpuPointerToBuffer(workerPtr);
    } catch (err) {
      onPage = { code: (err as WDL.WebDLPackError).code, message: (err as Error).message };
    }
    const pageParts = webdlpack.describeGPUPointer(pagePtr);
    const workerParts = webdlpack.describeGPUPointer(workerPtr);
    ctx.freeWebGPU(pagePtr);
    const workerLeft = await workerCall("free", { ptr: workerPtr });
    return { pageParts, workerParts, inWorker, onPage, workerLeft, pageLeft: ctx.stats().livePointers };
  });
  // Both are the first allocation of their context (same slot and generation): only the context tag differs.
  expect(r.pageParts.slot).toBe(r.workerParts.slot);
  expect(r.pageParts.generation).toBe(r.workerParts.generation);
  expect(r.pageParts.tag).not.toBe(r.workerParts.tag);
  expect(r.inWorker.resolved).toBe(false);
  expect(r.inWorker.code).toBe("INVALID_POINTER");
  expect(r.inWorker.message).toMatch(/another webdlpack context/);
  expect(r.onPage?.code).toBe("INVALID_POINTER");
  expect(r.onPage?.message).toMatch(/another webdlpack context/);
  expect(r.workerLeft).toBe(0);
  expect(r.pageLeft).toBe(0);
});

test("CPU tensors between threads: transfer both ways, copy out of Pyodide's heap; each sender's release runs once, there", async ({
  page,
}) => {
  await openWorkerPage(page);
  const r = await page.evaluate(async () => {
    const { webdlpack, workerCall } = window as unknown as WorkerPage;
    const waitFor = async (fn: () => boolean | Promise<boolean>) => {
      for (let i = 0; i < 200 && !(await fn()); i++) await new Promise((ok) => setTimeout(ok, 10));
      return fn();
    };
    // Page → worker, transfer: the page's tensor over its own ArrayBuffer (with a release hook).
    let released = 0;
    const array = Float32Array.from({ length: 1 << 20 }, (_, i) => i % 251);
    const mine = webdlpack.Tensor.fromTypedArray(array, {
      shape: [1024, 1024],
      onRelease: () => {
        released += 1;
      },
    });
    const t0 = performance.now();
    const packed = webdlpack.packTensorForThread(mine);
    const packMs = performance.now() - t0;
    const senderError = await (async () => {
      try {
        void mine.shape;
        return "usable";
      } catch (err) {
        return (err as WDL.WebDLPackError).code;
      }
    })();
    const detached = array.byteLength === 0;
    const releasedBeforeReceiver = released;
    const seen = (await workerCall("receive", { message: packed.message }, packed.transfer)) as {
      values: number[];
      path: string;
      storage: string;
      isCopied: boolean;
      shape: number[];
    };
    const releasedOnce = await waitFor(() => released === 1);
    const toWorker = {
      path: packed.path,
      bytesCopied: packed.bytesCopied,
      packMs,
      senderError,
      detached,
      releasedBeforeReceiver,
      releasedOnce,
      released,
      pending: webdlpack.pendingThreadReleases(),
      seenPath: seen.path,
      storage: seen.storage,
      isCopied: seen.isCopied,
      shape: seen.shape,
      sum: seen.values.reduce((a, b) => a + b, 0),
      expectedSum: Array.from({ length: 1 << 20 }, (_, i) => i % 251).reduce((a, b) => a + b, 0),
    };

    // Worker → page: a JS tensor (transfer) and a Pyodide heap tensor (one copy).
    const receiveHere = async (kind: string) => {
      const sent = (await workerCall("send", { kind })) as {
        message: unknown;
        path: string;
        bytesCopied: number;
        reason: string;
        senderUse: string;
        packMs: number;
      };
      const t = webdlpack.tensorFromThread(sent.message);
      const values = Array.from(t.view as Float32Array);
      const isCopied = t.flags.isCopied;
      const shape = [...t.shape];
      t.dispose();
      const settled =
        kind === "js"
          ? await waitFor(async () => ((await workerCall("counters")) as { released: number }).released === 1)
          : true;
      return { ...sent, message: undefined, values, isCopied, shape, settled, counters: await workerCall("counters") };
    };
    const jsFromWorker = await receiveHere("js");
    const pyFromWorker = await receiveHere("python");

    // A tensor over part of a buffer is copied (transferring would take the rest); a GPU tensor can not move.
    const big = new Float32Array(8);
    const part = webdlpack.Tensor.fromTypedArray(big.subarray(2, 6));
    const partPacked = webdlpack.packTensorForThread(part);
    const partSeen = (await workerCall("receive", { message: partPacked.message }, partPacked.transfer)) as {
      values: number[];
    };
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const ptr = await ctx.allocWebGPU(16);
    const gpu = webdlpack.Tensor.webgpu({ pointer: ptr, deviceId: 0, dtype: "float32", shape: [4] });
    let gpuRefusal = "";
    try {
      webdlpack.packTensorForThread(gpu);
    } catch (err) {
      gpuRefusal = `${(err as WDL.WebDLPackError).code}: ${(err as Error).message}`;
    }
    const gpuStillUsable = gpu.shape[0] === 4;
    // 16 MiB by transfer and by copy, pack + unpack on this thread, 20 rounds each in the same run
    // (reported, not asserted: no timed tests). A transferred buffer is transferred on, round after round.
    const rounds = 20;
    const source = new Float32Array(4 << 20);
    let moving = webdlpack.Tensor.fromTypedArray(new Float32Array(4 << 20));
    let start = performance.now();
    for (let i = 0; i < rounds; i++) moving = webdlpack.tensorFromThread(webdlpack.packTensorForThread(moving).message);
    const transferMs = (performance.now() - start) / rounds;
    moving.dispose();
    start = performance.now();
    for (let i = 0; i < rounds; i++)
      webdlpack
        .tensorFromThread(
          webdlpack.packTensorForThread(webdlpack.Tensor.fromTypedArray(source), { copy: true }).message,
        )
        .dispose();
    const timing = { transferMs, copyMs: (performance.now() - start) / rounds };
    gpu.dispose();
    ctx.freeWebGPU(ptr);
    return {
      toWorker,
      jsFromWorker,
      pyFromWorker,
      part: {
        path: partPacked.path,
        bytesCopied: partPacked.bytesCopied,
        reason: partPacked.reason,
        bigStillAttached: big.byteLength === 32,
        values: partSeen.values,
      },
      gpuRefusal,
      gpuStillUsable,
      timing,
    };
  });
  const w = r.toWorker;
  expect(w).toMatchObject({
    path: "transfer",
    bytesCopied: 0,
    senderError: "DISPOSED",
    detached: true,
    releasedBeforeReceiver: 0,
    releasedOnce: true,
    released: 1,
    pending: 0,
    seenPath: "transfer",
    storage: "js",
    isCopied: false,
    shape: [1024, 1024],
  });
  expect(w.sum).toBe(w.expectedSum);
  expect(r.jsFromWorker).toMatchObject({
    path: "transfer",
    bytesCopied: 0,
    senderUse: "DISPOSED",
    values: [10, 20, 30, 40],
    isCopied: false,
    shape: [2, 2],
    settled: true,
    counters: { released: 1, pending: 0 },
  });
  expect(r.pyFromWorker).toMatchObject({
    path: "copy",
    bytesCopied: 12,
    senderUse: "DISPOSED",
    values: [5, 6, 7],
    isCopied: true,
    counters: { pythonLiveExports: 0, pending: 0 },
  });
  expect(r.pyFromWorker.reason).toMatch(/wasm heap/);
  expect(r.part).toMatchObject({ path: "copy", bytesCopied: 16, bigStillAttached: true, values: [0, 0, 0, 0] });
  expect(r.part.reason).toMatch(/covers 16 of its ArrayBuffer's 32 bytes/);
  expect(r.gpuRefusal).toMatch(/^UNSUPPORTED: .*WebGPU objects can not cross threads/);
  expect(r.gpuStillUsable).toBe(true);
  console.log(
    `thread moves: 4 MiB transfer packed in ${w.packMs.toFixed(3)} ms; worker → page js ${r.jsFromWorker.path} ` +
      `(${r.jsFromWorker.packMs.toFixed(3)} ms), python ${r.pyFromWorker.path} (${r.pyFromWorker.packMs.toFixed(3)} ms); ` +
      `16 MiB pack + unpack, mean of 20: transfer ${r.timing.transferMs.toFixed(3)} ms vs copy ${r.timing.copyMs.toFixed(3)} ms ` +
      `(copy/transfer ${(r.timing.copyMs / Math.max(r.timing.transferMs, 0.001)).toFixed(0)}x)`,
  );
});

test("on a cross-origin isolated page a tensor in shared memory crosses with no copy: the worker writes, the page sees it", async ({
  page,
}) => {
  const loaded = await openWorkerPage(page, "/__isolated/tests/browser/worker.html", "setup");
  expect(loaded.crossOriginIsolated).toBe(true);
  const r = await page.evaluate(async () => {
    const { webdlpack, workerCall } = window as unknown as WorkerPage;
    let released = 0;
    const memory = new WebAssembly.Memory({ initial: 1, maximum: 4, shared: true });
    const view = new Float32Array(memory.buffer, 256, 4);
    view.set([1, 2, 3, 4]);
    const t = webdlpack.Tensor.fromTypedArray(view, {
      onRelease: () => {
        released += 1;
      },
    });
    const packed = webdlpack.packTensorForThread(t);
    const seen = (await workerCall("receive", { message: packed.message, write: 99 }, packed.transfer)) as {
      values: number[];
      bufferKind: string;
      path: string;
    };
    for (let i = 0; i < 200 && released === 0; i++) await new Promise((ok) => setTimeout(ok, 10));
    // A tensor in a wasm heap whose memory is shared (a threaded build's heap): shared too, no copy.
    const { createTestHost } = (window as unknown as WorkerPage).webdlpackTesting;
    const host = createTestHost(1, 4, { shared: true });
    const address = host.malloc(16);
    new Float32Array(host.buffer, address, 4).set([5, 6, 7, 8]);
    const inHeap = webdlpack.packTensorForThread(
      webdlpack.Tensor.wasmView(host, { data: address, dtype: "float32", shape: [4] }),
    );
    const heapSeen = (await workerCall("receive", { message: inHeap.message, write: 50 }, inHeap.transfer)) as {
      values: number[];
      path: string;
    };
    return {
      crossOriginIsolated,
      path: packed.path,
      bytesCopied: packed.bytesCopied,
      transferList: packed.transfer.length,
      seen,
      pageSees: Array.from(view),
      released,
      pending: webdlpack.pendingThreadReleases(),
      heap: {
        path: inHeap.path,
        bytesCopied: inHeap.bytesCopied,
        seen: heapSeen.values,
        heapSees: Array.from(new Float32Array(host.buffer, address, 4)),
      },
    };
  });
  expect(r.crossOriginIsolated).toBe(true);
  expect(r).toMatchObject({ path: "shared", bytesCopied: 0, transferList: 1, released: 1, pending: 0 });
  expect(r.seen).toMatchObject({ path: "shared", values: [1, 2, 3, 4], bufferKind: "SharedArrayBuffer" });
  expect(r.pageSees).toEqual([99, 2, 3, 4]); // the same memory: the worker's write is the page's
  expect(r.heap).toEqual({ path: "shared", bytesCopied: 0, seen: [5, 6, 7, 8], heapSees: [50, 6, 7, 8] });
});

test("tvmjs in the Worker too: Python → tvmjs → ORT-web → TF.js on the worker's one device, same buffers, one readback", async ({
  page,
}) => {
  const loaded = await openWorkerPage(page);
  expect(loaded.inWorker).toBe(true);
  const checks = await page.evaluate(() => (window as unknown as WorkerPage).workerCall("tvmChain"));
  expect(checks).toMatchObject({
    sharedDevice: true,
    tvmInputSameBuffer: true,
    tvmOutputSameBuffer: true,
    ortInputSameBuffer: true,
    tfjsInputSameBuffer: true,
    gpuReadBytesBeforeReadback: 0,
    gpuReadBytes: 128,
    lentBuffers: 0,
    leftoverPointers: 0,
    leaks: 0,
  });
  expect((checks as { maxError: number }).maxError).toBeLessThan(1e-5);
});
