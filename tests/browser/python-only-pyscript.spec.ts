/**
 * PyScript pages whose only code is Python (examples/python_only/pyscript*.html running ort_on_gpu.py, shown in
 * docs/python-only.md): PyScript installs webdlpack from the local wheel, `import webdlpack` brings up its own JS
 * half and the page's WebGPU device, and an ORT-web model runs on a GPU tensor on that device — on the main
 * thread and in PyScript's worker; and TensorFlow.js on a GPU tensor from Python (examples/python_only/tfjs_on_gpu.py,
 * through the helpers and by hand). Offline: Pyodide and its wheels are local (scripts/python_hosts.py), and no
 * request leaves 127.0.0.1.
 */
import { test, expect, type Page } from "@playwright/test";
import { THIRD_PARTY_WARNINGS } from "./fixtures.js";

/** What the example prints last, and the values it checked. */
const DONE = /webdlpack \+ onnxruntime-web in (\w+) on (.+) -> \[0\.0, 0\.0, 0\.0, 1\.0, 2\.0, 3\.0\]/;
/** What tfjs_on_gpu.py prints last. */
const TFJS_DONE = /webdlpack \+ TensorFlow\.js in (\w+) -> \[0\.0, 0\.0, 1\.0, 2\.0\]/;

/** Open `path`, wait for the line `done` matches; returns it, the console errors and any request off 127.0.0.1. */
async function runExample(
  page: Page,
  path: string,
  done: RegExp = DONE,
): Promise<{ line: string; errors: string[]; offsite: string[] }> {
  const errors: string[] = [];
  const offsite: string[] = [];
  let resolveLine: (line: string) => void;
  const line = new Promise<string>((resolve) => (resolveLine = resolve));
  page.context().on("request", (req) => {
    const url = new URL(req.url());
    if (!["data:", "blob:"].includes(url.protocol) && url.hostname !== "127.0.0.1") offsite.push(req.url());
  });
  page.context().on("response", (res) => {
    if (res.status() >= 400 && !res.url().endsWith("/favicon.ico")) errors.push(`${res.status()} ${res.url()}`);
  });
  page.on("pageerror", (err) => {
    errors.push(`page error: ${err.message}`);
    resolveLine(`failed: ${err.message}`);
  });
  page.on("console", (msg) => {
    if (done.test(msg.text())) resolveLine(msg.text());
    else if (
      msg.type() === "error" &&
      !msg.text().startsWith("Failed to load resource") &&
      !THIRD_PARTY_WARNINGS.test(msg.text()) // a warning, not a Python error (ORT 1.23 logs one on some CPUs)
    ) {
      errors.push(msg.text());
      resolveLine(`failed: ${msg.text()}`); // a Python error ends the run (PyScript logs its traceback)
    }
  });
  await page.goto(path);
  const found = await Promise.race([
    line,
    page.waitForTimeout(100_000).then(() => `timed out; console errors: ${errors.join(" | ")}`),
  ]);
  return { line: found, errors, offsite };
}

for (const [where, path, realm] of [
  ["the main thread", "/examples/python_only/pyscript.html", "window"],
  ["a worker", "/__isolated/examples/python_only/pyscript-worker.html", "worker"],
] as const) {
  test(`PyScript, Python only, on ${where}: local wheel, import webdlpack brings up its JS half, ORT-web on a GPU tensor`, async ({
    page,
  }) => {
    test.setTimeout(150_000);
    const { line, errors, offsite } = await runExample(page, path);
    expect(line).toMatch(DONE);
    expect(line.match(DONE)![1]).toBe(realm);
    expect(line.match(DONE)![2]).toContain("swiftshader"); // device 0 of the context webdlpack set up itself
    expect(errors).toEqual([]);
    expect(offsite).toEqual([]);
  });
}

test("PyScript, Python only: TensorFlow.js on the shared device, helpers and by hand, zero-copy both ways", async ({
  page,
}) => {
  test.setTimeout(150_000);
  const { line, errors, offsite } = await runExample(page, "/tests/browser/python-only-tfjs.html", TFJS_DONE);
  expect(line).toMatch(TFJS_DONE); // the example's asserts passed (handoff zero_copy, values both ways)
  expect(line.match(TFJS_DONE)![1]).toBe("window");
  expect(errors).toEqual([]);
  expect(offsite).toEqual([]);
});
