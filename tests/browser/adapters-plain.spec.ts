/**
 * The plain adapters (TypedArray, GPUBuffer), the GPU copy shader on many
 * dtypes and layouts, ORT CPU tensors, and lifetimes across DLPack exports —
 * in real Chromium with WebGPU (SwiftShader), on tests/browser/adapters.html.
 */
import { cachedTest as test, expect, openAdaptersPage } from "./fixtures.js";

test.beforeEach(async ({ page }) => {
  await openAdaptersPage(page);
});

test("TypedArray ↔ CPU tensor shares bytes; strided tensors are copied or refused", async ({ page }) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, webdlpackTesting } = window as any;
    const arr = new Float32Array([1, 2, 3, 4, 5, 6]);
    const t = webdlpack.Tensor.fromTypedArray(arr, { shape: [2, 3] });
    const view = adapters.tensorToTypedArray(t);
    view[0] = 42; // shared: visible in arr
    const bools = webdlpack.Tensor.fromTypedArray(new Uint8Array([1, 0, 1]), { dtype: "bool" });
    const strided = webdlpack.Tensor.fromTypedArray(new Int16Array([1, 2, 3, 4, 5, 6]), { shape: [6] });
    const errors: Record<string, unknown> = {};
    const catchErr = (name: string, fn: () => unknown) => {
      try {
        fn();
        errors[name] = "no error";
      } catch (e) {
        errors[name] = { code: (e as { code: string }).code, field: (e as { field: string }).field };
      }
    };
    catchErr("badShape", () => webdlpack.Tensor.fromTypedArray(arr, { shape: [4, 2] }));
    catchErr("dataview", () => webdlpack.Tensor.fromTypedArray(new DataView(new ArrayBuffer(4))));
    const host = webdlpackTesting.createTestHost(1, 4);
    const addr = host.malloc(32);
    new Int32Array(host.buffer, addr, 8).set([0, 1, 2, 3, 4, 5, 6, 7]);
    const wasmStrided = webdlpack.Tensor.wasmView(host, { data: addr, dtype: "int32", shape: [4], strides: [2] });
    catchErr("stridedNever", () => adapters.tensorToTypedArray(wasmStrided, { copy: "never" }));
    const gathered = Array.from(adapters.tensorToTypedArray(wasmStrided));
    return {
      shared: arr[0],
      viewType: view.constructor.name,
      sameBuffer: view.buffer === arr.buffer,
      boolDtype: { ...bools.dtype },
      int16: adapters.tensorToTypedArray(strided).constructor.name,
      errors,
      gathered,
    };
  });
  expect(r.shared).toBe(42);
  expect(r.viewType).toBe("Float32Array");
  expect(r.sameBuffer).toBe(true);
  expect(r.boolDtype).toEqual({ code: 6, bits: 8, lanes: 1 });
  expect(r.int16).toBe("Int16Array");
  expect(r.errors.badShape).toMatchObject({ code: "BAD_SHAPE" });
  expect(r.errors.dataview).toMatchObject({ code: "BAD_DTYPE", field: "array" }); // a DataView carries no element type
  expect(r.errors.stridedNever).toMatchObject({ code: "COPY_REQUIRED", field: "tensor.strides" });
  expect(r.gathered).toEqual([0, 2, 4, 6]);
});

test("GPUBuffer ↔ WebGPU tensor; GPU copies of every element width and layout read back right", async ({ page }) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters } = window as any;
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const device: GPUDevice = ctx.getWebGPUDevice(0);
    const base = ctx.stats().livePointers;
    const buffer = device.createBuffer({
      size: 256,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    });
    const bytes = new Uint8Array(256);
    for (let i = 0; i < 256; i++) bytes[i] = (i * 7 + 3) & 0xff;
    device.queue.writeBuffer(buffer, 0, bytes);
    let released = 0;
    const results: Record<string, unknown> = {};
    // [3, 4] views with strides (element units) and offsets, incl. negative strides, for 1/2/4/8-byte types.
    const cases = [
      { name: "uint8 transposed", dtype: "uint8", shape: [3, 4], strides: [1, 3], byteOffset: 5 },
      { name: "int16 negative", dtype: "int16", shape: [3, 4], strides: [-4, 1], byteOffset: 2 * 8 + 2 },
      { name: "float32 offset 12", dtype: "float32", shape: [3, 4], strides: null, byteOffset: 12 },
      { name: "int64 every 2nd", dtype: "int64", shape: [3, 4], strides: [8, 2], byteOffset: 8 },
      { name: "uint32 reversed both", dtype: "uint32", shape: [3, 4], strides: [-4, -1], byteOffset: 4 * 11 },
      { name: "0-d", dtype: "int32", shape: [], strides: null, byteOffset: 4 },
      { name: "empty", dtype: "float32", shape: [0, 4], strides: null, byteOffset: 0 },
    ];
    const view = new DataView(bytes.buffer);
    for (const c of cases) {
      const t = adapters.tensorFromGPUBuffer(buffer, {
        dtype: c.dtype,
        shape: c.shape,
        strides: c.strides,
        byteOffset: c.byteOffset,
        onRelease: () => released++,
      });
      const same = ctx.gpuPointerToBuffer(t.data) === buffer;
      const got = Array.from((await adapters.readTensor(t)) as ArrayLike<number | bigint>, (v) => String(v));
      // Expected, computed on the CPU from the same bytes.
      const size = { uint8: 1, int16: 2, float32: 4, int64: 8, uint32: 4, int32: 4 }[c.dtype]!;
      const read = (at: number): string => {
        switch (c.dtype) {
          case "uint8":
            return String(view.getUint8(at));
          case "int16":
            return String(view.getInt16(at, true));
          case "float32":
            return String(view.getFloat32(at, true));
          case "int64":
            return String(view.getBigInt64(at, true));
          case "uint32":
            return String(view.getUint32(at, true));
          default:
            return String(view.getInt32(at, true));
        }
      };
      const strides = c.strides ?? c.shape.map((_, k) => c.shape.slice(k + 1).reduce((a, b) => a * b, 1));
      const expected: string[] = [];
      const count = c.shape.reduce((a, b) => a * b, 1);
      for (let e = 0; e < count; e++) {
        let rem = e;
        let off = 0;
        for (let k = c.shape.length - 1; k >= 0; k--) {
          off += (rem % c.shape[k]!) * strides[k]!;
          rem = Math.floor(rem / c.shape[k]!);
        }
        expected.push(read(c.byteOffset + off * size));
      }
      results[c.name] = { same, ok: JSON.stringify(got) === JSON.stringify(expected), got, expected };
      t.dispose();
    }
    const errors: Record<string, unknown> = {};
    for (const [name, opts] of [
      ["outside", { dtype: "float32", shape: [65], byteOffset: 0 }],
      ["negativeOutside", { dtype: "float32", shape: [2], strides: [-1], byteOffset: 0 }],
      ["noShape", { dtype: "float32" }],
      ["badDtype", { dtype: "float33", shape: [1] }],
    ] as const) {
      try {
        adapters.tensorFromGPUBuffer(buffer, opts);
        errors[name] = "no error";
      } catch (e) {
        errors[name] = { code: (e as { code: string }).code, field: (e as { field: string }).field };
      }
    }
    const destroyedAfter = (() => {
      const owned = device.createBuffer({ size: 16, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC });
      const t = adapters.tensorFromGPUBuffer(owned, { dtype: "float32", shape: [4], owned: true });
      t.dispose();
      t.dispose(); // twice is a no-op
      return owned.size; // still readable after destroy; the table forgot it
    })();
    return {
      results,
      released,
      errors,
      destroyedAfter,
      live: ctx.stats().livePointers - base,
      produced: adapters.liveProducedTensors(),
    };
  });
  for (const [name, res] of Object.entries(
    r.results as Record<string, { same: boolean; ok: boolean; got: string[]; expected: string[] }>,
  )) {
    expect(res.same, name).toBe(true);
    expect(res.got, name).toEqual(res.expected);
  }
  expect(r.released).toBe(7);
  expect(r.errors.outside).toMatchObject({ code: "OUT_OF_BOUNDS" });
  expect(r.errors.negativeOutside).toMatchObject({ code: "OUT_OF_BOUNDS" });
  expect(r.errors.noShape).toMatchObject({ code: "BAD_SHAPE", field: "options.shape" });
  expect(r.errors.badDtype).toMatchObject({ code: "BAD_DTYPE" });
  expect(r.destroyedAfter).toBe(16);
  expect(r.live).toBe(0);
  expect(r.produced).toBe(0);
});

test("ORT CPU tensors ↔ CPU tensors share bytes; a DLPack export keeps an ORT GPU output alive", async ({ page }) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, loadMlp, webdlpackTesting } = window as any;
    const { ref, model } = await loadMlp();
    const ctx = webdlpack.getContext();
    await ctx.setup();
    // CPU: ORT tensor → webdlpack tensor over the same TypedArray, and back.
    const data = new Float32Array([1, 2, 3, 4]);
    const ot = new ort.Tensor("float32", data, [2, 2]);
    const t = adapters.tensorFromOrt(ot);
    const cpuShared = adapters.tensorToTypedArray(t).buffer === data.buffer;
    const back = await adapters.tensorToOrt(ort, t);
    const backShared = back.data.buffer === data.buffer;
    const i64 = adapters.tensorFromOrt(new ort.Tensor("int64", new BigInt64Array([5n, -6n]), [2]));
    const i64Dtype = { ...i64.dtype };
    let stringErr: unknown = null;
    try {
      adapters.tensorFromOrt(new ort.Tensor("string", ["a"], [1]));
    } catch (e) {
      stringErr = { code: (e as { code: string }).code, field: (e as { field: string }).field };
    }

    // GPU: an export (toManaged, as the Python bridge does) keeps the ORT output alive after dispose().
    const binding = adapters.bindOrtToContext(ort, ctx);
    const session = await ort.InferenceSession.create(
      model,
      binding.sessionOptions({ preferredOutputLocation: { Y: "gpu-buffer" } }),
    );
    const { Y } = await session.run({ X: new ort.Tensor("float32", Float32Array.from(ref.input.flat()), [4, 8]) });
    const y = binding.tensorFromOrt(Y);
    const y2 = binding.tensorFromOrt(Y); // the same ORT tensor twice: one pointer, two holders
    const onePointer = y.data === y2.data;
    const host = webdlpackTesting.createTestHost(1, 4);
    const addr = y.toManaged(host);
    y.dispose();
    y2.dispose();
    const aliveWithExport = Y.location === "gpu-buffer";
    const imported = webdlpack.Tensor.fromManaged(host, addr);
    const values = Array.from(await adapters.readTensor(imported)) as number[];
    imported.dispose(); // runs the export's deleter → last holder → ORT disposes
    return {
      cpuShared,
      backShared,
      backType: back.type,
      i64Dtype,
      stringErr,
      onePointer,
      aliveWithExport,
      disposedAtEnd: Y.location === "none",
      values,
      expected: ref.output.flat(),
      live: ctx.stats().livePointers,
      produced: adapters.liveProducedTensors(),
    };
  });
  expect(r.cpuShared).toBe(true);
  expect(r.backShared).toBe(true);
  expect(r.backType).toBe("float32");
  expect(r.i64Dtype).toEqual({ code: 0, bits: 64, lanes: 1 });
  expect(r.stringErr).toMatchObject({ code: "UNSUPPORTED", field: "ort.Tensor.type" });
  expect(r.onePointer).toBe(true);
  expect(r.aliveWithExport).toBe(true);
  expect(r.disposedAtEnd).toBe(true);
  r.values.forEach((v: number, i: number) => expect(Math.abs(v - r.expected[i])).toBeLessThan(1e-5));
  expect(r.live).toBe(0);
  expect(r.produced).toBe(0);
});

test("an adopted ORT output is one ledger entry: a dropped one is reported and released once; a bad shape is refused before adoption", async ({
  page,
}) => {
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const { webdlpack, adapters, ort, loadMlp } = window as any;
    const { ref, model } = await loadMlp();
    const failure = (fn: () => unknown): [string, string] => {
      try {
        fn();
        return ["no error", ""];
      } catch (e) {
        return [(e as { code: string }).code, (e as { field: string }).field];
      }
    };
    const ctx = webdlpack.getContext();
    await ctx.setup();
    const leaksBefore = ctx.leaks().length; // the page's earlier leaks (none expected) are not this test's
    const binding = adapters.bindOrtToContext(ort, ctx);
    const session = await ort.InferenceSession.create(model, binding.sessionOptions());
    const { Y } = await session.run({ X: new ort.Tensor("float32", Float32Array.from(ref.input.flat()), [4, 8]) });
    const pointersBefore = ctx.stats().livePointers;
    const entriesBefore = ctx.ledger.entries().length;

    // A shape ORT should never give: refused with the field named, nothing registered, the ORT tensor untouched.
    let disposed = 0;
    const fake = (dims: unknown[]) => ({
      type: "float32",
      dims,
      location: "gpu-buffer",
      gpuBuffer: Y.gpuBuffer,
      dispose: () => {
        disposed++;
      },
    });
    const negative = failure(() => binding.tensorFromOrt(fake([4, -8])));
    const fraction = failure(() => binding.tensorFromOrt(fake([1.5])));
    const tooBig = failure(() => binding.tensorFromOrt(fake([4, 800])));
    const refused = {
      disposed,
      pointers: ctx.stats().livePointers - pointersBefore,
      entries: ctx.ledger.entries().length - entriesBefore,
    };

    // Adopted: one ledger entry (the tensor's), naming the framework, the pointer and the bytes.
    let ptr = 0;
    let entries: unknown[] = [];
    (() => {
      const t = binding.tensorFromOrt(Y); // never disposed
      ptr = t.data;
      entries = ctx.ledger
        .entries()
        .filter((e: { pointer: number }) => e.pointer === ptr)
        .map((e: { kind: string; owner: string; bytes: number }) => `${e.kind}:${e.owner}:${e.bytes}`);
    })();
    const aliveWhileHeld = Y.location === "gpu-buffer";
    for (let i = 0; i < 30 && ctx.leaks().length === leaksBefore; i++) {
      (window as unknown as { gc(): void }).gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const leaks = ctx
      .leaks()
      .slice(leaksBefore)
      .map((l: { kind: string; owner: string; bytes: number; pointer: number }) => ({
        kind: l.kind,
        owner: l.owner,
        bytes: l.bytes,
        samePointer: l.pointer === ptr,
      }));
    let stale = "no error";
    try {
      ctx.gpuPointerToBuffer(ptr);
    } catch (e) {
      stale = (e as { code: string }).code;
    }
    const result = {
      negative,
      fraction,
      tooBig,
      refused,
      entries,
      aliveWhileHeld,
      leaks,
      releasedByFinalizer: Y.location === "none",
      stale,
      pointersBack: ctx.stats().livePointers === pointersBefore,
      produced: adapters.liveProducedTensors(),
    };
    return result;
  });
  expect(r.negative).toEqual(["BAD_SHAPE", "ortTensor.dims[1]"]);
  expect(r.fraction).toEqual(["BAD_SHAPE", "ortTensor.dims[0]"]);
  expect(r.tooBig).toEqual(["OUT_OF_BOUNDS", "ortTensor.gpuBuffer.size"]);
  expect(r.refused).toEqual({ disposed: 0, pointers: 0, entries: 0 });
  expect(r.entries).toEqual(["tensor:onnxruntime-web:128"]);
  expect(r.aliveWhileHeld).toBe(true);
  expect(r.leaks).toEqual([{ kind: "tensor", owner: "onnxruntime-web", bytes: 128, samePointer: true }]);
  expect(r.releasedByFinalizer).toBe(true);
  expect(r.stale).toMatch(/STALE_POINTER|INVALID_POINTER/);
  expect(r.pointersBack).toBe(true);
  expect(r.produced).toBe(0);
});
