/**
 * JupyterLite with its Pyodide kernel (a DedicatedWorker), offline: the site scripts/python_hosts.py built, whose
 * kernel loads the local Pyodide and never PyPI. In the REPL, one cell runs `%pip install` of the local webdlpack
 * wheel, the next runs examples/python_only/ort_on_gpu.py (as docs/python-only.md shows it): `import webdlpack`
 * brings up its JS half inside the kernel's Worker, and a GPU tensor goes through ORT-web and back. No request
 * leaves 127.0.0.1.
 */
import { readFileSync } from "node:fs";
import { test, expect } from "@playwright/test";

/** What the example prints last, and the values it checked. */
const DONE = /webdlpack \+ onnxruntime-web in (\w+) on (.+) -> \[0\.0, 0\.0, 0\.0, 1\.0, 2\.0, 3\.0\]/;

test("JupyterLite, Pyodide kernel in a Worker: %pip install of the local wheel, then ORT-web on a GPU tensor from a cell", async ({
  page,
}) => {
  test.setTimeout(180_000);
  const offsite: string[] = [];
  page.context().on("request", (req) => {
    const url = new URL(req.url());
    if (!["data:", "blob:"].includes(url.protocol) && url.hostname !== "127.0.0.1") offsite.push(req.url());
  });
  // The two cells docs/python-only.md shows.
  const cells = ["pip-install.ipy", "ort_on_gpu.py"].map((f) => readFileSync(`examples/python_only/${f}`, "utf8"));
  const query = new URLSearchParams([["kernel", "python"], ...cells.map((c) => ["code", c])]);
  await page.goto(`/build/python-hosts/lite/repl/index.html?${query}`);
  const outputs = page.locator(".jp-CodeConsole .jp-OutputArea-output");
  // The cells' outputs (not their inputs, which contain the same words): the example's last line, or an error.
  await expect(outputs.filter({ hasText: /webdlpack \+ onnxruntime-web in|Error/ })).not.toHaveCount(0, {
    timeout: 170_000,
  });
  const text = (await outputs.allInnerTexts()).join("\n");
  expect(text).toMatch(DONE);
  expect(text.match(DONE)![1]).toBe("worker"); // the kernel's DedicatedWorker
  expect(text.match(DONE)![2]).toContain("swiftshader");
  expect(offsite).toEqual([]);
});
