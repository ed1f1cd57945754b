/**
 * The README's examples, run as written from examples/ in Chromium with real
 * WebGPU (SwiftShader), on tests/browser/examples.html (tests/browser/frameworks.html for
 * Transformers.js), whose import map resolves the package names the examples import
 * ("webdlpack", "webdlpack/adapters", "pyodide", ORT, TF.js, Transformers.js) to local files. tests/js/readme-examples.test.ts proves the README shows
 * exactly these files.
 */
import type { Page } from "@playwright/test";
import { cachedTest as test, expect, openFrameworksPage } from "./fixtures.js";

async function openExamplesPage(page: Page): Promise<void> {
  page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") console.log(`[console error] ${msg.text()}`);
  });
  await page.goto("/tests/browser/examples.html");
  await page.waitForFunction(() => (window as unknown as { examplesReady?: boolean }).examplesReady === true);
}

test.beforeEach(async ({ page }) => {
  await openExamplesPage(page);
});

test("Python in Pyodide: python_in_pyodide.mjs runs python_in_pyodide.py; every assert passes and no GPU pointer is left", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    const { run } = await import("/examples/python_in_pyodide.mjs" as string);
    const values = (await run()) as number[][];
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const ctx = (window as any).webdlpack.getContext();
    return { values, livePointers: ctx.stats().livePointers as number };
  });
  // The example's last line: the async readback of the uploaded tensor, src[0] changed to 42 from Python.
  expect(r.values).toEqual([
    [42, 1, 2, 3],
    [4, 5, 6, 7],
    [8, 9, 10, 11],
  ]);
  expect(r.livePointers).toBe(0);
});

test("Python quick start: quickstart.py uploads, hands JS the GPUBuffer, reads back; nothing left alive", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    const { run } = await import("/examples/python_in_pyodide.mjs" as string);
    const values = (await run({ file: "./quickstart.py" })) as number[][];
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const ctx = (window as any).webdlpack.getContext();
    return { values, livePointers: ctx.stats().livePointers as number };
  });
  expect(r.values).toEqual([
    [1, 2],
    [3, 4],
  ]);
  expect(r.livePointers).toBe(0);
});

test("a failing assert in the Python example rejects run() with the PythonError (so a pass means the asserts held)", async ({
  page,
}) => {
  const message = await page.evaluate(async () => {
    // Serve the example with its first assert made false, through the same run().
    const original = window.fetch;
    window.fetch = async (input: RequestInfo | URL, init?: RequestInit) => {
      const response = await original(input, init);
      if (!String(input).endsWith("/examples/python_in_pyodide.py")) return response;
      const code = (await response.text()).replace("assert jt.view[0] == 42.0", "assert jt.view[0] == 41.0");
      return new Response(code);
    };
    try {
      const { run } = await import("/examples/python_in_pyodide.mjs" as string);
      await run();
      return "resolved";
    } catch (err) {
      return String((err as Error).message);
    } finally {
      window.fetch = original;
    }
  });
  expect(message).toContain("AssertionError");
});

test("JS with ORT and TF.js: js_ort_tfjs.mjs gives sigmoid(model(x)) as NumPy does, with one readback, and leaves nothing alive", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    const [ort, tf, tfwebgpu, example] = await Promise.all([
      import("onnxruntime-web/webgpu" as string),
      import("@tensorflow/tfjs-core" as string),
      import("@tensorflow/tfjs-backend-webgpu" as string),
      import("/examples/js_ort_tfjs.mjs" as string),
    ]);
    ort.env.wasm.wasmPaths = "/node_modules/onnxruntime-web/dist/";
    ort.env.wasm.numThreads = 1;
    const ref = await (await fetch("/tests/data/mlp_reference.json")).json();
    const modelBytes = new Uint8Array(await (await fetch("/tests/data/mlp.onnx")).arrayBuffer());
    // setup() measures the device's transfers once per page (reading back staging): done here, before counting, so the
    // example's own setup() finds the context ready and the count below is the example's alone.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    await (window as any).webdlpack.getContext().setup();
    // Count bytes mapped for reading (GPU → CPU): the example's only one is z.data().
    let readBytes = 0;
    const mapAsync = GPUBuffer.prototype.mapAsync;
    GPUBuffer.prototype.mapAsync = function (this: GPUBuffer, mode: number, offset?: number, size?: number) {
      if ((mode & GPUMapMode.READ) !== 0) readBytes += size ?? this.size - (offset ?? 0);
      return mapAsync.call(this, mode, offset, size);
    };
    let values: Float32Array;
    try {
      values = await example.run({
        ort,
        tf,
        WebGPUBackend: tfwebgpu.WebGPUBackend,
        modelBytes,
        input: Float32Array.from(ref.input.flat()),
        dims: ref.shape,
      });
    } finally {
      GPUBuffer.prototype.mapAsync = mapAsync;
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const ctx = (window as any).webdlpack.getContext();
    return {
      isFloat32Array: values instanceof Float32Array,
      values: Array.from(values),
      expected: ref.tfjs_sigmoid.flat() as number[],
      readBytes,
      livePointers: ctx.stats().livePointers as number,
      tfTensors: tf.memory().numTensors as number,
      guardOwners: ctx.stats().devices[0].guardOwners as string[],
      // Who made buffers on the shared device through a guard (rows stay after a framework lets go).
      memoryOwners: ctx.memory().owners.map((o: { owner: string }) => o.owner) as string[],
    };
  });
  expect(r.isFloat32Array).toBe(true);
  expect(r.values).toHaveLength(32);
  r.values.forEach((v, i) => expect(Math.abs(v - r.expected[i]!)).toBeLessThan(1e-5));
  expect(r.readBytes).toBe(32 * 4);
  expect(r.livePointers).toBe(0);
  expect(r.tfTensors).toBe(0);
  // Both ran on the shared device through their guards. The example releases its ORT session: ORT 1.30 keeps its
  // guard, 1.23–1.29 destroy it (only ORT's hold goes), so only TF.js's hold is still there for every version.
  expect(r.memoryOwners).toEqual(expect.arrayContaining(["onnxruntime-web", "tfjs"]));
  expect(r.guardOwners).toContain("tfjs");
});

test("C compiled to wasm: example_gpu_tensor() (built with emcc into a side module, called via ctypes) hands JS a WebGPU tensor; JS's dispose frees its buffer once", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    const { loadPyodide } = await import("pyodide" as string);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const webdlpack = (window as any).webdlpack;
    const { readTensor } = await import("webdlpack/adapters" as string);
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const pyodide = await loadPyodide({ indexURL: "/node_modules/pyodide/" });
    const bridge = await webdlpack.loadWebDLPack(pyodide);
    // The side module holds the C library and the example (wasm/wasm.mk builds it).
    const lib = await webdlpack.loadWebDLPackC(pyodide, {
      url: "/wasm/build/examples/c_webgpu_tensor.so",
      path: "/lib/c_webgpu_tensor.so",
    });
    try {
      const handle = pyodide.runPython(`
import ctypes
example = ctypes.CDLL("${lib.path}")
example.example_gpu_tensor.restype = ctypes.c_int32
example.example_gpu_tensor()
`) as number;
      const statsWhileLive = lib.gpuStats();
      const t = webdlpack.Tensor.fromManaged(bridge.host, lib.takeTensor(handle)); // JS owns it now
      const ptr = t.data as number;
      const head = {
        storage: t.storage,
        device: [t.device.deviceType, t.device.deviceId],
        shape: [...t.shape],
        sameBuffer: t.gpuBuffer === ctx.gpuPointerToBuffer(ptr),
        owner: ctx.gpuPointerInfo(ptr).owner,
      };
      // The buffer C allocated is a real GPUBuffer: write it, read it back through the tensor.
      const written = Float32Array.from({ length: 1024 }, (_, i) => i * 0.5 - 7);
      ctx.getWebGPUDevice(0).queue.writeBuffer(t.gpuBuffer, 0, written);
      const back = (await readTensor(t)) as Float32Array;
      const matches = back.length === 1024 && back.every((v, i) => v === written[i]);
      t.dispose(); // runs the C deleter: free_gpu_buffer → wdl_webgpu_free
      let afterDispose = "still live";
      try {
        ctx.gpuPointerInfo(ptr);
      } catch (e) {
        afterDispose = (e as { code?: string }).code ?? String(e);
      }
      return {
        handle,
        statsWhileLive,
        head,
        matches,
        afterDispose,
        statsAfter: lib.gpuStats(),
        livePointers: ctx.stats().livePointers,
      };
    } finally {
      lib.dispose();
    }
  });
  expect(r.handle).toBeGreaterThan(0);
  expect(r.statsWhileLive).toEqual({ liveCount: 1, liveBytes: 4096 });
  expect(r.head).toEqual({ storage: "webgpu", device: [15, 0], shape: [1024], sameBuffer: true, owner: "c" });
  expect(r.matches).toBe(true);
  expect(r.afterDispose).toBe("STALE_POINTER");
  expect(r.statsAfter).toEqual({ liveCount: 0, liveBytes: 0 });
  expect(r.livePointers).toBe(0);
});

test("Transformers.js as users write it: transformers_pipeline.mjs pools and normalizes on the shared device (tolist() works), and the GPU opt-in gives the same embedding through TF.js", async ({
  page,
}) => {
  await openFrameworksPage(page); // its import map also names @huggingface/transformers (and its own ORT)
  const r = await page.evaluate(async () => {
    const [tf, tfwebgpu, example] = await Promise.all([
      import("@tensorflow/tfjs-core" as string),
      import("@tensorflow/tfjs-backend-webgpu" as string),
      import("/examples/transformers_pipeline.mjs" as string),
    ]);
    const ref = await (await fetch("/tests/data/transformers/tiny-bert/reference.json")).json();
    const out = await example.run({
      tf,
      WebGPUBackend: tfwebgpu.WebGPUBackend,
      model: "tiny-bert",
      text: ref.text,
      localModelPath: "/tests/data/transformers/",
      wasmPaths: "/node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist/",
    });
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters } = window as any;
    const ctx = webdlpack.getContext();
    return {
      ...out,
      hidden: ref.last_hidden_state[0] as number[][],
      livePointers: ctx.stats().livePointers as number,
      produced: adapters.liveProducedTensors() as number,
      tfTensors: tf.memory().numTensors as number,
    };
  });
  // The reference: the mean over tokens of NumPy's last hidden state, scaled to unit length.
  const hidden: number[][] = r.hidden;
  const mean = hidden[0]!.map((_, j) => hidden.reduce((sum, row) => sum + row[j]!, 0) / hidden.length);
  const norm = Math.hypot(...mean);
  const expected = mean.map((v) => v / norm);
  expect(r.embedding).toHaveLength(expected.length);
  r.embedding.forEach((v: number, i: number) => expect(Math.abs(v - expected[i]!)).toBeLessThan(1e-5));
  r.fromTfjs.forEach((v: number, i: number) => expect(Math.abs(v - expected[i]!)).toBeLessThan(1e-5));
  expect(r.livePointers).toBe(0);
  expect(r.produced).toBe(0);
  expect(r.tfTensors).toBe(0);
});
