// Python's importer inside Pyodide under Node: every case of spec/validation-rules.json against the real
// wasm memory end, then the struct fuzzer (tests/py/struct_corpus.py) for a number of cases or seconds, and
// whether a dropped capsule is released at once (the capsule destructor side module, built by make).
// Prints one JSON line {"ok", "table", "fuzz", "alive"}; exit code 0 only when nothing went wrong.
//   node tests/py/pyodide_corpus.mjs <repo root> [--cases N | --seconds S] [--seed N]
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const root = process.argv[2] ?? process.cwd();
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const cases = arg("--cases", 0);
const seconds = arg("--seconds", cases ? 0 : 10);
const seed = arg("--seed", Date.now() % 1e9);
const { loadPyodide } = await import(pathToFileURL(join(root, "node_modules/pyodide/pyodide.mjs")).href);

let report = { ok: false };
try {
  const pyodide = await loadPyodide({ indexURL: join(root, "node_modules/pyodide/") });
  const copyTree = (from, to) => {
    pyodide.FS.mkdirTree(to);
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      if (entry.isDirectory() && entry.name !== "__pycache__") copyTree(join(from, entry.name), `${to}/${entry.name}`);
      else if (entry.name.endsWith(".py") || entry.name === "py.typed" || entry.name.endsWith("emscripten-wasm32.so")) {
        pyodide.FS.writeFile(`${to}/${entry.name}`, readFileSync(join(from, entry.name)));
      }
    }
  };
  copyTree(join(root, "py/webdlpack"), "/home/pyodide/webdlpack");
  pyodide.FS.writeFile("/home/pyodide/struct_corpus.py", readFileSync(join(root, "tests/py/struct_corpus.py")));
  pyodide.FS.writeFile("/home/pyodide/validation-rules.json", readFileSync(join(root, "spec/validation-rules.json")));
  const t0 = performance.now();
  const out = await pyodide.runPythonAsync(`
import json, struct_corpus
table = json.load(open("/home/pyodide/validation-rules.json"))
result = {"table": struct_corpus.run_table(table, bounded=True),
          "fuzz": struct_corpus.fuzz(${seed}, max_cases=${cases}, seconds=${seconds}),
          "capsules": struct_corpus.dropped_capsule_release()}
json.dumps(result)
`);
  const result = JSON.parse(out);
  // Pyodide still runs Python after everything (a trap would have made it unusable).
  const alive = pyodide.runPython("sum(range(10))") === 45;
  const minutes = (performance.now() - t0) / 60000;
  report = {
    ok: alive && result.table.failures.length === 0 && result.fuzz.wrong === 0,
    seed,
    minutes: Number(minutes.toFixed(2)),
    ...result,
    alive,
  };
} catch (err) {
  report = { ok: false, error: String(err?.stack ? err.stack : err) };
}
console.log(JSON.stringify(report));
process.exit(report.ok ? 0 : 1);
