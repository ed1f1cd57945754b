// CPU tensor exchange between Python (Pyodide) and JS, per size, in the page.
// Each case is timed as one exchange + touching the result + releasing it,
// repeated `reps` times per sample; we report per-exchange median and min.

function timeCase(fn, { samples, minMs }) {
  // Calibrate the inner repetitions so one sample lasts at least minMs.
  let reps = 1;
  for (;;) {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) fn();
    const dt = performance.now() - t0;
    if (dt >= minMs || reps >= 1 << 20) break;
    reps *= dt < minMs / 10 ? 10 : 2;
  }
  const per = [];
  for (let s = 0; s < samples; s++) {
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) fn();
    per.push(((performance.now() - t0) / reps) * 1000); // µs per exchange
  }
  per.sort((a, b) => a - b);
  return { median_us: per[Math.floor(per.length / 2)], min_us: per[0], samples, reps };
}

export async function cpuExchange(pyodide, bridge, { sizes, samples = 7, minMs = 40 }) {
  const webdlpack = pyodide.pyimport("webdlpack");
  const toJs = webdlpack.to_js;
  const fromJs = webdlpack.from_js;
  const results = [];
  for (const nbytes of sizes) {
    const n = nbytes / 4;
    pyodide.runPython(`import array, webdlpack\n_b = array.array("f", bytes(${nbytes}))\n_t = webdlpack.from_buffer(_b)`);
    const arr = pyodide.globals.get("_b");
    const t = pyodide.globals.get("_t");
    let sink = 0;
    const cases = {
      // Python → JS
      "py→js webdlpack.to_js": () => { const jt = toJs(t); sink += jt.view.length; jt.dispose(); },
      "py→js pyodide toJs (copy)": () => { const a = arr.toJs(); sink += a.length; },
      "py→js pyodide getBuffer": () => { const b = arr.getBuffer(); sink += b.data.length; b.release(); },
    };
    // JS → Python: a tensor already in the heap (made by Python, held by JS), and a plain JS array
    const heapTensor = bridge.fromPython(t);
    const plain = new Float32Array(n);
    cases["js→py webdlpack.from_js"] = () => { const p = fromJs(heapTensor); sink += p.nbytes; p.dispose(); p.destroy(); };
    pyodide.globals.set("_plain", plain);
    const toPy = pyodide.runPython("lambda: len(_plain.to_py())");
    cases["js→py pyodide to_py (copy)"] = () => { sink += toPy(); };
    for (const [name, fn] of Object.entries(cases)) {
      // Fewer samples for the slow copies at big sizes keep the run short.
      const r = timeCase(fn, { samples: nbytes >= 1 << 24 && name.includes("copy") ? 3 : samples, minMs });
      results.push({ case: name, nbytes, ...r });
    }
    heapTensor.dispose();
    toPy.destroy();
    arr.destroy();
    t.dispose();
    t.destroy();
    pyodide.runPython("del _b, _t, _plain");
    if (sink < 0) console.log(sink);
  }
  toJs.destroy();
  fromJs.destroy();
  webdlpack.destroy();
  return results;
}

export async function exchangeLoop(pyodide, _bridge, { count = 10000, nbytes = 1024 }) {
  pyodide.runPython(`import array, webdlpack\n_b = array.array("f", bytes(${nbytes}))\n_t = webdlpack.from_buffer(_b)`);
  const t = pyodide.globals.get("_t");
  const toJs = pyodide.pyimport("webdlpack").to_js;
  const live0 = Number(pyodide.runPython("from webdlpack import _debug; _debug.export_stats()['live']"));
  const t0 = performance.now();
  let sink = 0;
  for (let i = 0; i < count; i++) { const jt = toJs(t); sink += jt.view[0]; jt.dispose(); }
  const ms = performance.now() - t0;
  const live1 = Number(pyodide.runPython("_debug.export_stats()['live']"));
  t.dispose(); t.destroy(); toJs.destroy();
  pyodide.runPython("del _b, _t");
  return { count, nbytes, total_ms: ms, per_exchange_us: (ms / count) * 1000, live_exports_left: live1 - live0, sink };
}
