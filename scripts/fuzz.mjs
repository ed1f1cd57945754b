#!/usr/bin/env node
/**
 * Long fuzz mode (`make fuzz`): the C validator under ASan/UBSan, the JS decoder, Python's importer
 * inside Pyodide, and GPU buffer adoption in Chromium (own, foreign and destroyed GPUBuffers), each for the
 * same number of minutes, side by side. `make test` runs the short mode of each (validate.fuzz_short,
 * tests/js/fuzz-decoder.test.ts, tests/py/test_pyodide_corpus.py, tests/browser/gpu-adoption-fuzz.spec.ts).
 *   node scripts/fuzz.mjs [--minutes M] [--only c,js,py,gpu] [--seed N]
 * Prints one line per fuzzer and writes build/fuzz/report.json; exit code 1 on a crash or a wrong outcome.
 * Needs `make build`, build/tests-c/fuzz_validate and the compiled JS tests (make fuzz does both).
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const minutes = Number(arg("--minutes", "10"));
const seconds = Math.max(1, Math.round(minutes * 60));
const seed = Number(arg("--seed", String(Date.now() % 1e9)));
const only = arg("--only", "c,js,py,gpu").split(",");

/** Run a command; resolves to {code, signal, stdout, stderr, minutes}. */
function run(cmd, args, env = {}) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd: root, env: { ...process.env, ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("close", (code, signal) =>
      resolve({ code, signal, stdout, stderr, minutes: (performance.now() - t0) / 60000 }),
    );
  });
}

/** The report line of a fuzzer that prints its stats `s` ({cases, accepted, refused, wrong, failures}; null: crashed). */
function fuzzerResult(name, r, s, output) {
  return {
    name,
    ok: r.code === 0 && s !== null && s.wrong === 0,
    minutes: r.minutes,
    crashed: s === null,
    cases: s?.cases ?? 0,
    accepted: s?.accepted ?? 0,
    refused: s?.refused ?? 0,
    wrong: s?.wrong ?? 0,
    detail: s?.failures?.length ? s.failures.join("; ") : s === null ? output.slice(-2000) : undefined,
  };
}

const jobs = {
  c: async () => {
    const r = await run(
      join(root, "build/tests-c/fuzz_validate"),
      ["--seconds", String(seconds), "--seed", String(seed)],
      { ASAN_OPTIONS: "detect_leaks=1:allocator_may_return_null=1", UBSAN_OPTIONS: "print_stacktrace=1" },
    );
    const m = /(\d+) structs, (\d+) accepted, (\d+) refused, (\d+) wrong/.exec(r.stdout);
    return {
      name: "C validator (ASan/UBSan)",
      ok: r.code === 0,
      minutes: r.minutes,
      crashed: r.signal !== null || !m,
      cases: m ? Number(m[1]) : 0,
      accepted: m ? Number(m[2]) : 0,
      refused: m ? Number(m[3]) : 0,
      wrong: m ? Number(m[4]) : 0,
      detail: r.code === 0 ? undefined : (r.stderr || r.stdout).slice(-2000),
    };
  },
  js: async () => {
    const script =
      `import(${JSON.stringify(pathToFileURL(join(root, "build/tests-js/tests/js/fuzz/decoder-fuzz.js")).href)})` +
      `.then(m => console.log(JSON.stringify(m.fuzzDecoder({ seed: ${seed}, seconds: ${seconds} }))))`;
    const r = await run(process.execPath, ["--input-type=module", "-e", script]);
    let s = null;
    try {
      s = JSON.parse(r.stdout.trim().split("\n").pop());
    } catch {
      /* crashed */
    }
    return fuzzerResult("JS decoder", r, s, r.stderr);
  },
  py: async () => {
    const r = await run(process.execPath, [
      join(root, "tests/py/pyodide_corpus.mjs"),
      root,
      "--seconds",
      String(seconds),
      "--seed",
      String(seed),
    ]);
    let s = null;
    try {
      s = JSON.parse(
        r.stdout
          .trim()
          .split("\n")
          .filter((l) => l.startsWith("{"))
          .pop(),
      );
    } catch {
      /* crashed */
    }
    const f = s?.fuzz;
    return {
      name: "Python in Pyodide",
      ok: r.code === 0 && s?.ok === true,
      minutes: r.minutes,
      crashed: !s?.alive,
      cases: f?.cases ?? 0,
      accepted: f?.accepted ?? 0,
      refused: f?.refused ?? 0,
      wrong: f?.wrong ?? 0,
      table: s?.table ? `${s.table.ran} table cases, ${s.table.failures.length} failed` : undefined,
      detail:
        s?.error ?? (f?.failures?.length ? f.failures.join("; ") : s === null ? r.stderr.slice(-2000) : undefined),
    };
  },
  gpu: async () => {
    const r = await run(
      process.execPath,
      [join(root, "node_modules/@playwright/test/cli.js"), "test", "tests/browser/gpu-adoption-fuzz.spec.ts"],
      {
        WEBDLPACK_FUZZ_SECONDS: String(seconds),
        WEBDLPACK_FUZZ_SEED: String(seed),
      },
    );
    const line = r.stdout.split("\n").find((l) => l.includes('"gpuAdoptionFuzz"'));
    const s = line ? JSON.parse(line.slice(line.indexOf("{"))).gpuAdoptionFuzz : null;
    return fuzzerResult("GPU adoption (Chromium)", r, s, r.stdout + r.stderr);
  },
};

console.log(`fuzz: ${only.join(", ")} for ${minutes} min each, side by side, seed ${seed}`);
const results = await Promise.all(only.map((k) => jobs[k]()));
for (const r of results) {
  console.log(
    `${r.ok ? "ok  " : "FAIL"} ${r.name.padEnd(26)} ${r.minutes.toFixed(1)} min  ${r.cases} structs  ` +
      `${r.accepted} accepted  ${r.refused} refused  ${r.wrong} wrong  ${r.crashed ? 1 : 0} crashes${r.table ? `  (${r.table})` : ""}`,
  );
  if (r.detail) console.log(`     ${r.detail}`);
}
mkdirSync(join(root, "build/fuzz"), { recursive: true });
writeFileSync(join(root, "build/fuzz/report.json"), JSON.stringify({ seed, minutes, results }, null, 2));
process.exit(results.every((r) => r.ok) ? 0 : 1);
