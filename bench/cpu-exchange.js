// CPU tensor exchange between Python (Pyodide), JS and C (the side module), in the page.
//
// Like for like: in every row that involves Python, JS makes ONE call into Python (a function of
// bench/pyodide_cases.py with one argument) and that function does the whole exchange — hand over,
// touch, release — and returns a number; a webdlpack row and the copy row it is compared with cross
// the same number of times. The baseline row is the same call doing nothing (one int argument).
// Rows between JS and C call the side module's exports directly.
//
// Each row is one exchange + touch + release, repeated `reps` times per sample; we report the
// per-exchange median and min. All cases of one size are warmed up first, then sampled round-robin (in a new
// order each round, each sample after a short untimed lead-in), so a slow spell of the machine hits every case
// alike and no case always pays for the same neighbour's garbage.

import { timeCases, warmUp } from "./cpu-timing.js";

const FLOAT32 = { code: 2, bits: 32, lanes: 1 };

/**
 * Everything the cases need, made once per page: the Python half (bench/pyodide_cases.py as module
 * `webdlpack_bench`), the side module (loaded through webdlpack's loader, opened by Python with ctypes),
 * and the JS consumers Python hands its results to. Outside a page (bench/node-exchange.mjs) pass the
 * side module's bytes and the Python file's text instead of fetching them.
 */
export async function benchEnv(
  pyodide,
  bridge,
  webdlpack,
  { clibURL = "/js/dist/wasm/libwebdlpack.so", clibBytes, casesSource } = {},
) {
  const clib = await webdlpack.loadWebDLPackC(
    pyodide,
    clibBytes !== undefined ? { bytes: clibBytes } : { url: clibURL },
  );
  const source = casesSource ?? (await (await fetch(new URL("./pyodide_cases.py", import.meta.url))).text());
  pyodide.FS.writeFile("/home/pyodide/webdlpack_bench.py", source);
  const py = pyodide.pyimport("webdlpack_bench");
  const sinkRef = { sink: 0 };
  const consumeTensor = (jt) => {
    const v = jt.view[0];
    jt.dispose();
    return v;
  };
  const consumeArray = (a) => a[0];
  py.attach(clib.path, consumeTensor, consumeArray);
  const fns = {};
  for (const name of [
    "ffi_int",
    "py_to_js",
    "py_to_js_copy",
    "js_to_py",
    "js_to_py_copy",
    "js_address_to_py",
    "c_to_py",
    "c_to_py_copy",
    "py_to_c",
    "py_to_c_copy",
    "setup",
    "teardown",
  ])
    fns[name] = py[name];
  return { pyodide, bridge, webdlpack, clib, py, fns, sinkRef, host: bridge.host, module: pyodide._module };
}

/** Release what {@link benchEnv} made. */
export function closeEnv(env) {
  for (const f of Object.values(env.fns)) f.destroy();
  env.py.destroy();
}

/**
 * The cases of one size: `{fn, direction, kind, case, samples}`; `release()` frees what they share.
 * kind: "webdlpack" (zero-copy through DLPack structs), "copy" (the same bytes copied: the anchor
 * of the direction), "baseline" (the plain FFI call).
 */
export function sizeCases(env, nbytes, samples) {
  // Set-up memory through webdlpack's host (malloc/free): Pyodide before 314 exports no module._malloc.
  const { fns, host, module: m, clib, webdlpack, sinkRef, pyodide, bridge } = env;
  const n = nbytes / 4;
  const x = clib.exports;
  // A C-owned float32 buffer made by the side module; its DLTensor is the view C exports from.
  const shapeAt = host.malloc(8) >>> 0;
  new DataView(host.buffer).setBigInt64(shapeAt, BigInt(n), true);
  const dtypeAt = host.malloc(4) >>> 0;
  new DataView(host.buffer).setUint32(dtypeAt, FLOAT32.code | (FLOAT32.bits << 8) | (FLOAT32.lanes << 16), true);
  const cBase =
    clib.check(x.wdl_managed_tensor_alloc_cpu_p(dtypeAt, 1, shapeAt), "wdl_managed_tensor_alloc_cpu_p", true) >>> 0;
  host.free(shapeAt);
  host.free(dtypeAt);
  const cView = cBase + webdlpack.LAYOUT.DLManagedTensorVersioned.dl_tensor;
  const cData = new DataView(host.buffer).getUint32(cView + webdlpack.LAYOUT.DLTensor.data, true);
  const pyTensor = fns.setup(nbytes, cView, cData);
  // JS-side tensors: one over Python's bytes (a wasm tensor JS holds), one over C's, one plain JS array.
  const heapTensor = bridge.fromPython(pyTensor);
  const cTensor = webdlpack.Tensor.wasmView(host, { data: cData, dtype: "float32", shape: [n] });
  const plain = new Float32Array(n);
  const plainBytes = new Uint8Array(plain.buffer);
  const pyBuf = pyodide.globals.get("__import__")("webdlpack_bench")._buf;
  const big = nbytes >= 1 << 24;
  const copySamples = big ? 3 : samples; // the slow copies at big sizes keep the run short
  const c = (direction, kind, name, fn, s = samples) => ({
    direction,
    kind,
    case: `${direction} ${name}`,
    fn,
    samples: s,
  });
  const cases = [
    c("ffi", "baseline", "JS → Python call, one int argument", () => {
      sinkRef.sink += fns.ffi_int(1);
    }),
    // Python → JS: Python hands the tensor to a JS function (Python does the job, one JS → Python call).
    c("py→js", "webdlpack", "webdlpack.to_js → JS consumer", () => {
      sinkRef.sink += fns.py_to_js(0);
    }),
    c(
      "py→js",
      "copy",
      "pyodide.ffi.to_js (copy) → JS consumer",
      () => {
        sinkRef.sink += fns.py_to_js_copy(0);
      },
      copySamples,
    ),
    // Python → JS, JS pulls: one JS → Python call returns the tensor.
    c("py→js pull", "webdlpack", "bridge.fromPython", () => {
      const jt = bridge.fromPython(pyTensor);
      sinkRef.sink += jt.view[0];
      jt.dispose();
    }),
    c(
      "py→js pull",
      "copy",
      "PyProxy.toJs (copy)",
      () => {
        const a = pyBuf.toJs();
        sinkRef.sink += a[0];
      },
      copySamples,
    ),
    c("py→js pull", "info", "PyProxy.getBuffer (borrowed view)", () => {
      const b = pyBuf.getBuffer();
      sinkRef.sink += b.data[0];
      b.release();
    }),
    // JS → Python: Python takes a JS tensor (one JS → Python call with the JS object).
    c("js→py", "webdlpack", "webdlpack.from_js", () => {
      sinkRef.sink += fns.js_to_py(heapTensor);
    }),
    c(
      "js→py",
      "copy",
      "JsProxy.to_py (copy)",
      () => {
        sinkRef.sink += fns.js_to_py_copy(plain);
      },
      copySamples,
    ),
    // JS → Python, JS pushes: JS writes the struct, one JS → Python call with its address.
    c("js→py push", "webdlpack", "tensor.toManaged → Python adopts", () => {
      sinkRef.sink += fns.js_address_to_py(heapTensor.toManaged(host));
    }),
    c(
      "js→py push",
      "copy",
      "JsProxy.to_py (copy)",
      () => {
        sinkRef.sink += fns.js_to_py_copy(plain);
      },
      copySamples,
    ),
    // C → JS: the side module makes a managed tensor over its buffer; JS takes, touches, disposes it (deleter → C).
    c("c→js", "webdlpack", "wdl_managed_tensor_create_borrowed → Tensor.fromManaged", () => {
      const jt = webdlpack.Tensor.fromManaged(host, x.wdl_managed_tensor_create_borrowed(cView) >>> 0);
      sinkRef.sink += jt.view[0];
      jt.dispose();
    }),
    c(
      "c→js",
      "copy",
      "slice of the C buffer (copy)",
      () => {
        sinkRef.sink += new Float32Array(host.buffer, cData, n).slice()[0];
      },
      copySamples,
    ),
    // JS → C: JS exports a tensor over C's buffer; C validates it and calls the deleter (→ JS).
    c("js→c", "webdlpack", "tensor.toManaged → C validates + releases", () => {
      const a = cTensor.toManaged(host);
      if (x.wdl_managed_tensor_check(a) !== 0) throw clib.lastError("wdl_managed_tensor_check");
      x.wdl_managed_tensor_release(a);
    }),
    c(
      "js→c",
      "copy",
      "malloc + set + free (copy into the heap)",
      // The anchor is the plainest copy there is: the module's own malloc, HEAPU8 and free where it exports them
      // (Pyodide 314 and later); before 314 only webdlpack's host has them, a slower anchor (bench-smoke only).
      typeof m._malloc === "function"
        ? () => {
            const p = m._malloc(nbytes) >>> 0;
            m.HEAPU8.set(plainBytes, p);
            sinkRef.sink += m.HEAPU8[p];
            m._free(p);
          }
        : () => {
            const p = host.malloc(nbytes) >>> 0;
            const heap = new Uint8Array(host.buffer);
            heap.set(plainBytes, p);
            sinkRef.sink += heap[p];
            host.free(p);
          },
      copySamples,
    ),
    // C ↔ Python through ctypes, each one JS → Python call.
    c("c→py", "webdlpack", "C makes, Python adopts (import_managed)", () => {
      sinkRef.sink += fns.c_to_py(0);
    }),
    c(
      "c→py",
      "copy",
      "ctypes.string_at (copy)",
      () => {
        sinkRef.sink += fns.c_to_py_copy(0);
      },
      copySamples,
    ),
    c("py→c", "webdlpack", "export_managed → C validates + releases", () => {
      sinkRef.sink += fns.py_to_c(0);
    }),
    c(
      "py→c",
      "copy",
      "malloc + memmove + free (copy)",
      () => {
        sinkRef.sink += fns.py_to_c_copy(0);
      },
      copySamples,
    ),
  ];
  const release = () => {
    heapTensor.dispose();
    cTensor.dispose();
    pyBuf.destroy();
    pyTensor.destroy();
    fns.teardown();
    x.wdl_managed_tensor_release(cBase);
  };
  return { cases, release };
}

/**
 * Per-exchange times of every case at each size.
 * @param {object} env what {@link benchEnv} returned
 * @param {{sizes: number[], samples?: number, minMs?: number}} options
 */
export async function cpuExchange(env, { sizes, samples = 7, minMs = 40 }) {
  const results = [];
  // A discarded warm-up of every case first (see warmUp), so the first size measured does not pay for the page's own
  // warm-up: code tiers, Pyodide's first calls, garbage left by loading. Its cold figures are kept apart.
  const warm = sizeCases(env, sizes[0], 1);
  try {
    env.warmUp = warmUp(warm.cases);
  } finally {
    warm.release();
  }
  for (const nbytes of sizes) {
    const { cases, release } = sizeCases(env, nbytes, samples);
    try {
      for (const r of timeCases(cases, nbytes >= 1 << 24 ? Math.min(minMs, 20) : minMs)) results.push({ ...r, nbytes });
    } finally {
      release();
    }
  }
  if (env.sinkRef.sink === -1) console.log(env.sinkRef.sink);
  return results;
}

/** Every live count the exchange paths keep, and the wasm heap size. */
function liveCounts(env) {
  const { pyodide, webdlpack, clib, host } = env;
  const py = JSON.parse(pyodide.runPython("import json, webdlpack_bench as _wb\njson.dumps(_wb.live_counts())"));
  return {
    heapBytes: host.buffer.byteLength,
    jsLiveExports: webdlpack.liveExportCount(),
    jsFinalized: webdlpack.finalizerStats().finalized,
    cLiveTensors: clib.exports.wdl_managed_tensor_live_count() >>> 0, // the size's own C buffer counts 1
    cHandles: clib.handles.size,
    ...py,
  };
}

/**
 * Steady state: `count` exchanges per direction in one loop at `nbytes`, after a warm-up of a tenth of
 * that; heap size and every live count before and after, and the per-exchange time of the whole loop
 * against the single-exchange median of the same case measured (as in {@link cpuExchange}) right before it.
 */
export async function exchangeLoop(env, { count = 100000, nbytes = 1024, samples = 7, minMs = 40 }) {
  const { cases, release } = sizeCases(env, nbytes, samples);
  const out = [];
  try {
    for (const c of cases.filter((x) => x.kind === "webdlpack")) {
      for (let i = 0; i < count / 10; i++) c.fn();
      const [single] = timeCases([c], minMs);
      const before = liveCounts(env);
      const t0 = performance.now();
      for (let i = 0; i < count; i++) c.fn();
      const ms = performance.now() - t0;
      const after = liveCounts(env);
      const changed = Object.keys(before).filter((k) => before[k] !== after[k]);
      out.push({
        case: c.case,
        direction: c.direction,
        count,
        nbytes,
        total_ms: ms,
        per_exchange_us: (ms / count) * 1000,
        single_median_us: single.median_us,
        before,
        after,
        changed,
      });
    }
  } finally {
    release();
  }
  return out;
}
