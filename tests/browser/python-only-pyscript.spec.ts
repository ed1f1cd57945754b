/**
 * PyScript pages whose only code is Python (examples/python_only/pyscript*.html running ort_on_gpu.py, shown in
 * docs/python-only.md): PyScript installs webdlpack from the local wheel, `import webdlpack` brings up its own JS
 * half and the page's WebGPU device, and an ORT-web model runs on a GPU tensor on that device — on the main
 * thread and in PyScript's worker; and TensorFlow.js on a GPU tensor from Python (examples/python_only/tfjs_on_gpu.py,
 * through the helpers and by hand). Offline: Pyodide and its wheels are local (scripts/python_hosts.py), and no
 * request leaves 127.0.0.1.
 */
import { test, expect } from "@playwright/test";
import { runExample } from "./python-only-page.js";

/** What the example prints last, and the values it checked. */
const DONE = /webdlpack \+ onnxruntime-web in (\w+) on (.+) -> \[0\.0, 0\.0, 0\.0, 1\.0, 2\.0, 3\.0\]/;
/** What tfjs_on_gpu.py prints last. */
const TFJS_DONE = /webdlpack \+ TensorFlow\.js in (\w+) -> \[0\.0, 0\.0, 1\.0, 2\.0\]/;

for (const [where, path, realm] of [
  ["the main thread", "/examples/python_only/pyscript.html", "window"],
  ["a worker", "/__isolated/examples/python_only/pyscript-worker.html", "worker"],
] as const) {
  test(`PyScript, Python only, on ${where}: local wheel, import webdlpack brings up its JS half, ORT-web on a GPU tensor`, async ({
    page,
  }) => {
    test.setTimeout(150_000);
    const { line, errors, offsite } = await runExample(page, path, DONE);
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
