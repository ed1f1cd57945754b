// CPU tensor exchange between Python (Pyodide) and JS, per size, in the page.
// Each case is timed as one exchange + touching the result + releasing it,
// repeated `reps` times per sample; we report per-exchange median and min.
// All cases of one size are warmed up first, then sampled round-robin, so a
// slow spell of the machine hits every case alike.

function calibrate(fn, minMs) {
  // Inner repetitions so one sample lasts at least minMs.
  let reps = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) fn();
    const dt = performance.now() - t0;
    if (dt >= minMs || reps >= 1 << 20) return reps;
    reps *= dt < minMs / 10 ? 10 : 2;
  }
}

function sampleOnce(fn, reps) {
  // performance.now() is coarse without cross-origin isolation (tens of µs): a sample that read 0 was
  // shorter than one tick, so it is repeated with more repetitions rather than reported as free.
  for (let n = reps; ; n *= 2) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) fn();
    const dt = performance.now() - t0;
    if (dt > 0 || n >= 1 << 24) return (dt / n) * 1000; // µs per exchange
  }
}

/** Time every case of `cases` ({name: [fn, samples]}) round-robin; one result row per case. */
function timeCases(cases, minMs) {
  const entries = Object.entries(cases).map(([name, [fn, samples]]) => ({ name, fn, samples, per: [] }));
  for (const e of entries) calibrate(e.fn, minMs); // warm-up (JIT, caches)
  for (const e of entries) e.reps = calibrate(e.fn, minMs);
  const rounds = Math.max(...entries.map((e) => e.samples));
  for (let s = 0; s < rounds; s++) {
    for (const e of entries) if (e.per.length < e.samples) e.per.push(sampleOnce(e.fn, e.reps));
  }
  return entries.map((e) => {
    e.per.sort((a, b) => a - b);
    return { case: e.name, median_us: e.per[Math.floor(e.per.length / 2)], min_us: e.per[0], samples: e.samples, reps: e.reps };
  });
}

// Python helpers for the breakdown cases (see cpuExchange's `breakdown` option).
const BREAKDOWN_PY = `
import webdlpack_js
from webdlpack.exchange import export as _export
from webdlpack.api import js_tensors as _js_bridge
_bd_js_object = webdlpack_js.isTensor  # any JS function returning a value; isTensor returns a boolean
def _bd_noop(x):
    return None
def _bd_export_release(x):
    _export.release_export(x._export(True))
def _bd_export(x):
    return x._export(True)
def _bd_py_to_js_call(x):
    return webdlpack_js.context()
def _bd_from_js_dispose(x):
    _js_bridge.from_js(x).dispose()
`;

function breakdownCases(pyodide, bridge, t, heapTensor, webdlpack, samples, sinkRef) {
  pyodide.runPython(BREAKDOWN_PY);
  const g = (name) => pyodide.globals.get(name);
  const noop = g("_bd_noop"), exportRelease = g("_bd_export_release"), exportOnly = g("_bd_export");
  const pyToJs = g("_bd_py_to_js_call"), fromJsDispose = g("_bd_from_js_dispose");
  const host = bridge.host;
  const callDeleter = (address) => {
    const view = new DataView(host.buffer);
    host.callVoidPointer(view.getUint32(address + 12, true), address); // DLManagedTensorVersioned.deleter
  };
  const cases = {
    "part py→js: JS→Python call (no-op)": () => { noop(t); },
    "part py→js: + Python export + release": () => { exportRelease(t); },
    "part py→js: + Python→JS call returning a JS object": () => { pyToJs(t); },
    "part py→js: + export, JS decode + view + dispose (deleter into Python)": () => {
      const jt = webdlpack.Tensor.fromManaged(host, exportOnly(t) >>> 0);
      sinkRef.sink += jt.view.length;
      jt.dispose();
    },
    "part js→py: JS toManaged + deleter (no Python)": () => { callDeleter(heapTensor.toManaged(host)); },
    "part js→py: JS→Python call, from_js + dispose in Python (no PyProxy use)": () => { fromJsDispose(heapTensor); },
  };
  const out = {};
  for (const [name, fn] of Object.entries(cases)) out[name] = [fn, samples];
  out.destroy = () => [noop, exportRelease, exportOnly, pyToJs, fromJsDispose].forEach((f) => f.destroy());
  return out;
}

/**
 * Per-exchange times at each size.
 * @param {object} pyodide a Pyodide with webdlpack loaded
 * @param {object} bridge what loadWebDLPack returned
 * @param {{sizes: number[], samples?: number, minMs?: number, breakdown?: boolean, webdlpack?: object}} options
 *   `breakdown` adds "part …" rows that split the two webdlpack exchanges into their steps
 *   (needs `webdlpack`, the JS module); they are additive: each "+" row includes the rows above it.
 */
export async function cpuExchange(pyodide, bridge, { sizes, samples = 7, minMs = 40, breakdown = false, webdlpack = null }) {
  const py = pyodide.pyimport("webdlpack");
  const toJs = py.to_js;
  const fromJs = py.from_js;
  const results = [];
  const sinkRef = { sink: 0 };
  for (const nbytes of sizes) {
    const n = nbytes / 4;
    pyodide.runPython(`import array, webdlpack\n_b = array.array("f", bytes(${nbytes}))\n_t = webdlpack.from_buffer(_b)`);
    const arr = pyodide.globals.get("_b");
    const t = pyodide.globals.get("_t");
    // Fewer samples for the slow copies at big sizes keep the run short.
    const copySamples = nbytes >= 1 << 24 ? 3 : samples;
    const cases = {
      // Python → JS
      "py→js webdlpack.to_js": [() => { const jt = toJs(t); sinkRef.sink += jt.view.length; jt.dispose(); }, samples],
      "py→js pyodide toJs (copy)": [() => { const a = arr.toJs(); sinkRef.sink += a.length; }, copySamples],
      "py→js pyodide getBuffer": [() => { const b = arr.getBuffer(); sinkRef.sink += b.data.length; b.release(); }, samples],
    };
    // JS → Python: a tensor already in the heap (made by Python, held by JS), and a plain JS array
    const heapTensor = bridge.fromPython(t);
    const plain = new Float32Array(n);
    cases["js→py webdlpack.from_js"] = [() => { const p = fromJs(heapTensor); sinkRef.sink += p.nbytes; p.dispose(); p.destroy(); }, samples];
    pyodide.globals.set("_plain", plain);
    const toPy = pyodide.runPython("lambda: len(_plain.to_py())");
    cases["js→py pyodide to_py (copy)"] = [() => { sinkRef.sink += toPy(); }, copySamples];
    let parts = null;
    if (breakdown) {
      parts = breakdownCases(pyodide, bridge, t, heapTensor, webdlpack, samples, sinkRef);
      for (const [name, c] of Object.entries(parts)) if (name !== "destroy") cases[name] = c;
    }
    for (const r of timeCases(cases, minMs)) results.push({ ...r, nbytes });
    parts?.destroy();
    heapTensor.dispose();
    toPy.destroy();
    arr.destroy();
    t.dispose();
    t.destroy();
    pyodide.runPython("del _b, _t, _plain");
    if (sinkRef.sink < 0) console.log(sinkRef.sink);
  }
  toJs.destroy();
  fromJs.destroy();
  py.destroy();
  return results;
}

export async function exchangeLoop(pyodide, _bridge, { count = 10000, nbytes = 1024 }) {
  pyodide.runPython(`import array, webdlpack\n_b = array.array("f", bytes(${nbytes}))\n_t = webdlpack.from_buffer(_b)`);
  const t = pyodide.globals.get("_t");
  const toJs = pyodide.pyimport("webdlpack").to_js;
  const live0 = Number(pyodide.runPython("from webdlpack.api import debug; debug.export_stats()['live']"));
  const t0 = performance.now();
  let sink = 0;
  for (let i = 0; i < count; i++) { const jt = toJs(t); sink += jt.view[0]; jt.dispose(); }
  const ms = performance.now() - t0;
  const live1 = Number(pyodide.runPython("_debug.export_stats()['live']"));
  t.dispose(); t.destroy(); toJs.destroy();
  pyodide.runPython("del _b, _t");
  return { count, nbytes, total_ms: ms, per_exchange_us: (ms / count) * 1000, live_exports_left: live1 - live0, sink };
}
