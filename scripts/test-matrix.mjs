#!/usr/bin/env node
/**
 * `make test-matrix`: the tests that depend on another package's version, under every version webdlpack
 * declares (package.json pins each as an npm alias; scripts/matrix-versions.mjs reads them):
 * - each Pyodide: the demo, and every browser spec that loads Pyodide; plus, in Node, the JS/C shared
 *   allocator test (tests/js/pyodide-allocator.test.ts) under every Pyodide;
 * - each framework at its floor and newest: every browser spec that touches it (scripts/matrix-versions.mjs,
 *   frameworkSpecs). The newest versions are all served at once (nothing aliased): one run of every framework's specs.
 * The server serves the alias under the package's own name ($WEBDLPACK_PACKAGES, scripts/serve.mjs), so the
 * pages are unchanged. Prints a table and writes it to docs/test-matrix.md.
 *
 *   node scripts/test-matrix.mjs [--quick] [--only TEXT]... [--junit FILE]
 *
 * --quick (`./run test`'s suite "pyodide-range"): only the oldest and newest Pyodide, the demo and the
 * Python bridge specs; no frameworks, no docs file. --only: only the rows whose "<package> <version>" holds
 * TEXT (e.g. "Pyodide 0.28", "onnxruntime-web 1.23"; repeatable), to rerun failed rows: their lines replace
 * the same rows of docs/test-matrix.md, each line dated. --junit: each test under each version as a JUnit case.
 */
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { mergeRerun } from "./matrix-doc.mjs";
import { startServer } from "./serve.mjs";
import { browserSettings } from "./browser-settings.mjs";
import {
  FRAMEWORKS,
  frameworkSpecs,
  frameworkVersions,
  pyodideRangeEnds,
  pyodideVersions,
  servedPackages,
} from "./matrix-versions.mjs";

const ROOT = join(fileURLToPath(import.meta.url), "..", "..");
const quick = process.argv.includes("--quick");
const only = process.argv.flatMap((a, i) => (process.argv[i - 1] === "--only" ? [a] : []));
/** Whether the row of `pkg` at `version` runs (every row unless --only names others). */
const wanted = (pkg, version) => only.length === 0 || only.some((t) => `${pkg} ${version}`.includes(t));
const OUT = join(ROOT, "build", "test-matrix");

/**
 * The browser specs that load Pyodide (their source names it), run under each Pyodide; with --quick only the
 * Python bridge and Python WebGPU specs (python-bridge-*, python-gpu-*).
 */
function pythonSpecs() {
  const dir = join(ROOT, "tests/browser");
  const specs = readdirSync(dir)
    .filter((f) => f.endsWith(".spec.ts"))
    .sort();
  const chosen = quick
    ? specs.filter((f) => /^python-(bridge|gpu)-/.test(f))
    : specs.filter((f) => /pyodide/i.test(readFileSync(join(dir, f), "utf8")));
  return chosen.map((f) => `tests/browser/${f}`);
}

/**
 * Run a command with $WEBDLPACK_PACKAGES set; returns {status, stdout, seconds}. Its output goes to a file, not a
 * pipe buffer: a long run of many specs can print more than any buffer (a 19-spec run was cut off at 37 of 63 tests).
 */
function run(cmd, args, packages, extraEnv = {}) {
  const t0 = performance.now();
  mkdirSync(OUT, { recursive: true });
  const log = join(OUT, "output.log");
  const fd = openSync(log, "w");
  let r;
  try {
    r = spawnSync(cmd, args, {
      cwd: ROOT,
      env: { ...process.env, WEBDLPACK_PACKAGES: packages, ...extraEnv },
      stdio: ["ignore", fd, fd],
    });
  } finally {
    closeSync(fd);
  }
  return { status: r.status, stdout: readFileSync(log, "utf8"), seconds: (performance.now() - t0) / 1000 };
}

/** Playwright over `specs`: "passed/total" (failures named), and whether all passed. */
function playwright(specs, packages, tag) {
  mkdirSync(OUT, { recursive: true });
  const report = join(OUT, `${tag}.json`);
  rmSync(report, { force: true });
  const r = run("npx", ["playwright", "test", "--reporter=json", ...specs], packages, {
    PLAYWRIGHT_JSON_OUTPUT_NAME: report,
  });
  let stats;
  const failed = [];
  const cases = [];
  try {
    const json = JSON.parse(readFileSync(report, "utf8"));
    stats = json.stats;
    const walk = (suite) => {
      for (const s of suite.suites ?? []) walk(s);
      for (const spec of suite.specs ?? []) {
        const skipped = (spec.tests ?? []).every((t) => t.status === "skipped");
        const ok = spec.ok && !skipped;
        cases.push({ name: `${spec.file}: ${spec.title}`, ok, file: spec.file.split("/").pop() });
        if (!ok) failed.push(`${spec.file}: ${spec.title}${skipped ? " (skipped)" : ""}`);
      }
    };
    for (const s of json.suites ?? []) walk(s);
  } catch {
    const failure = r.stdout.slice(-2000);
    return { text: `no report (exit ${r.status})`, ok: false, failed: [failure], cases, seconds: r.seconds };
  }
  const total = stats.expected + stats.unexpected + stats.flaky + stats.skipped;
  const ok = r.status === 0 && stats.unexpected === 0 && stats.skipped === 0 && total > 0;
  return { text: `${stats.expected}/${total}`, ok, failed, cases, seconds: r.seconds };
}

/** The Pyodide version pages get when served with `packages` (proves the alias took effect). */
async function servedPyodide(packages) {
  const server = await startServer({ port: 0, quiet: true, packages });
  try {
    return (await (await fetch(`${server.url}/node_modules/pyodide/package.json`)).json()).version;
  } finally {
    await server.close();
  }
}

/** The allocator test in Node under every Pyodide: {version: "ok" | "FAIL"}. */
function allocatorInNode() {
  const build = run("npx", ["tsc", "-p", "tests/js/tsconfig.json"], "");
  if (build.status !== 0) return {};
  const r = run(
    "node",
    ["--test", "--test-reporter=tap", "build/tests-js/tests/js/pyodide-allocator.test.js"],
    "",
    quick ? {} : { WEBDLPACK_EVERY_PYODIDE: "1" },
  );
  writeFileSync(join(OUT, "allocator-node.log"), r.stdout); // every later run() overwrites output.log
  const result = {};
  for (const m of r.stdout.matchAll(/^(ok|not ok) \d+ - Pyodide (\S+):/gm))
    result[m[2]] = m[1] === "ok" ? "ok" : "FAIL";
  return result;
}

/** The rows' cases as JUnit XML (scripts/test_summary.py counts them). */
function junit(rows) {
  const esc = (t) => t.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");
  const cases = rows.flatMap((r) =>
    r.cases.map(
      (c) =>
        `  <testcase classname="${esc(`${r.what} ${r.version}`)}" name="${esc(c.name)}">` +
        `${c.ok ? "" : '<failure message="failed"/>'}</testcase>`,
    ),
  );
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuite name="test-matrix" tests="${cases.length}">\n${cases.join("\n")}\n</testsuite>\n`;
}

const t0 = performance.now();
const rows = [];
let allOk = true;
const chosen = (quick ? pyodideRangeEnds() : pyodideVersions()).filter((p) => wanted("Pyodide", p.version));
const allocator = chosen.length > 0 ? allocatorInNode() : {};
const specs = pythonSpecs();
for (const { install, version } of chosen) {
  const packages = servedPackages({ pyodide: install });
  const served = await servedPyodide(packages);
  const demo = run("node", ["scripts/demo.mjs", "--no-models"], packages); // the real-model page: once, by make demo
  const tests = playwright(specs, packages, `pyodide-${version}`);
  const alloc = allocator[version] ?? "not run";
  const ok = demo.status === 0 && tests.ok && alloc === "ok" && served === version;
  allOk &&= ok;
  rows.push({
    what: "Pyodide",
    version: `${version} (${install})`,
    served,
    demo: demo.status === 0 ? "pass" : "FAIL",
    tests: `${tests.text} (${specs.length} specs)`,
    extra: `malloc/free shared: ${alloc}`,
    ok,
    failed: tests.failed.concat(demo.status === 0 ? [] : [`demo: ${demo.stdout.slice(-1500)}`]),
    cases: [
      { name: "served under the package's name", ok: served === version },
      { name: "malloc/free shared by JS and C (Node)", ok: alloc === "ok" },
      { name: "demo", ok: demo.status === 0 },
      ...tests.cases,
    ],
    seconds: demo.seconds + tests.seconds,
  });
  console.log(`${ok ? "PASS" : "FAIL"} Pyodide ${version}: demo ${rows.at(-1).demo}, specs ${tests.text}`);
}
if (!quick) {
  // Each framework's floor and newest, with the specs that touch it; runs serving the same packages are one run.
  const planned = [];
  const runs = new Map(); // served packages → {specs, result}
  for (const framework of FRAMEWORKS) {
    const versions = frameworkVersions(framework);
    const specs = frameworkSpecs(framework);
    for (const { version, packages } of [versions[0], versions[versions.length - 1]].filter(
      (v, i, a) => v && a.indexOf(v) === i,
    )) {
      if (!wanted(framework.name, version)) continue;
      const served = servedPackages(packages);
      if (!runs.has(served)) runs.set(served, { specs: new Set(), tag: `${framework.name}-${version}` });
      for (const spec of specs) runs.get(served).specs.add(spec);
      planned.push({ framework, versions, version, packages, served, specs });
    }
  }
  for (const run of runs.values()) run.result = playwright([...run.specs].sort(), run.served, run.tag);
  for (const { framework, versions, version, packages, served, specs } of planned) {
    const { result } = runs.get(served);
    const files = new Set(specs.map((f) => f.split("/").pop()));
    const cases = result.cases.filter((c) => files.has(c.file));
    const passed = cases.filter((c) => c.ok).length;
    const ok = result.cases.length > 0 && cases.length > 0 && passed === cases.length;
    allOk &&= ok;
    const failed = result.cases.length > 0 ? cases.filter((c) => !c.ok).map((c) => c.name) : result.failed;
    rows.push({
      what: framework.name,
      version: `${version} (${Object.values(packages).join(" + ")})`,
      served: "",
      demo: "",
      tests: `${passed}/${cases.length} (${specs.length} specs)`,
      extra: versions.length === 1 ? "floor = newest" : version === versions[0].version ? "floor" : "newest",
      ok,
      failed,
      cases,
      seconds: result.seconds,
    });
    console.log(
      `${ok ? "PASS" : "FAIL"} ${framework.name} ${version}: ${passed}/${cases.length} (${specs.length} specs)`,
    );
  }
}
const minutes = ((performance.now() - t0) / 60_000).toFixed(1);
const now = new Date().toISOString().slice(0, 16).replace("T", " ");
const HEADER = [
  "| package | version (installed as) | page loaded | demo | browser specs passed | also | result | time | run (UTC) |",
  "|---|---|---|---|---|---|---|---|---|",
];
const rowLines = rows.map(
  (r) =>
    `| ${r.what} | ${r.version} | ${r.served} | ${r.demo} | ${r.tests} | ${r.extra} | ${r.ok ? "pass" : "FAIL"} | ${r.seconds.toFixed(0)} s | ${now} |`,
);
const lines = [...HEADER, ...rowLines];
console.log(
  `\n${lines.join("\n")}\n\n${allOk ? "test-matrix: every version passed" : "test-matrix: FAILED"} (${minutes} min)`,
);
for (const r of rows) for (const f of r.failed) console.log(`  failed under ${r.what} ${r.version}: ${f}`);
/** The machine: CPU, cores, memory and the browser (its --version). */
function machine() {
  const chromium = spawnSync(browserSettings.launchOptions().executablePath, ["--version"], { encoding: "utf8" });
  const cpu = cpus();
  return `${cpu[0]?.model ?? "unknown CPU"}, ${cpu.length} cores, ${Math.round(totalmem() / 2 ** 30)} GiB; ${
    chromium.stdout?.trim() || "Chromium (version unknown)"
  } headless, SwiftShader WebGPU`;
}

/** docs/test-matrix.md: a full run writes it anew; a rerun (--only) replaces its rows and keeps the others. */
function writeDoc() {
  const path = join(ROOT, "docs", "test-matrix.md");
  let table = rowLines;
  let when = `Full run ${now} UTC, ${minutes} min in all, on ${machine()}.`;
  if (only.length > 0 && existsSync(path)) {
    const note = `Rerun ${now} UTC (--only ${only.join(", ")}), ${minutes} min, on ${machine()}.`;
    const merged = mergeRerun(readFileSync(path, "utf8"), rowLines, note);
    table = merged.rows;
    when = merged.notes.join("\n\n");
  }
  const doc = [
    "# Version matrix",
    "",
    "Written by `make test-matrix` (scripts/test-matrix.mjs): the demo and every browser spec that loads Pyodide under",
    "each Pyodide webdlpack supports, and every browser spec that touches a framework at that framework's floor and",
    "newest version (`frameworkSpecs` in scripts/matrix-versions.mjs: the specs whose source names it; package.json",
    "pins each version, the floors are npm aliases). Each row says when it ran.",
    "",
    "The python-only-pyscript and python-only-jupyterlite specs count in every Pyodide row, but their hosts",
    "(PyScript, JupyterLite) load the Pyodide copy of build/python-hosts (scripts/python_hosts.py), which is the",
    "default `pyodide` install: under the other rows they ran that version, not the row's. Framework rows that",
    "serve the same packages (each framework's newest: nothing aliased) are one run of every framework's specs;",
    "each row counts the tests of its own framework's specs.",
    "",
    when,
    "",
    ...HEADER,
    ...table,
    "",
  ];
  writeFileSync(path, doc.join("\n"));
}
if (!quick) writeDoc();
const junitAt = process.argv.indexOf("--junit");
if (junitAt > 0) writeFileSync(process.argv[junitAt + 1], junit(rows));
process.exit(allOk ? 0 : 1);
