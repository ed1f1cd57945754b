/**
 * NumPy inside Pyodide ↔ webdlpack ↔ JS, zero-copy, in the real browser.
 *
 * NumPy for Pyodide cannot be fetched offline (see ../shared/platform-notes.md):
 * these tests run only when WEBDLPACK_PYODIDE_PACKAGES names a local folder
 * holding a Pyodide numpy wheel (`numpy-*.whl`, e.g. a Pyodide distribution's
 * package folder), and are skipped with that reason otherwise. The page
 * fetches the wheel from `/__pyodide-packages/<file>`, which this spec serves
 * from that folder itself (page.route), so the repository server is unchanged.
 */
import { readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { test, expect, type Page } from "@playwright/test";

const PACKAGES = process.env.WEBDLPACK_PYODIDE_PACKAGES ?? "";
const SKIP_REASON =
  "NumPy for Pyodide is not obtainable offline: set WEBDLPACK_PYODIDE_PACKAGES to a local Pyodide package folder holding numpy";

type W = {
  pyodide: {
    runPython(c: string): unknown;
    loadPackage(u: string, o?: object): Promise<unknown>;
    globals: { get(n: string): unknown; set(n: string, v: unknown): void };
    _module: { HEAPU8: Uint8Array };
  };
  webdlpack: typeof import("../../js/src/index.js");
};

/** The numpy wheel in the packages folder (fails, not skips, when the folder has none). */
function numpyWheel(): string {
  const found = readdirSync(PACKAGES).filter((f) => /^numpy-.*\.whl$/.test(f)).sort();
  if (found.length === 0) throw new Error(`WEBDLPACK_PYODIDE_PACKAGES=${PACKAGES} holds no numpy-*.whl`);
  return found[found.length - 1]!;
}

test.describe("NumPy in Pyodide (runs only with WEBDLPACK_PYODIDE_PACKAGES)", () => {
  test.skip(PACKAGES === "", SKIP_REASON);
  test.describe.configure({ mode: "serial" });

  let page: Page;

  test.beforeAll(async ({ browser }) => {
    const wheel = numpyWheel();
    page = await browser.newPage();
    page.on("pageerror", (err) => console.log(`[page error] ${err.message}`));
    await page.route("**/__pyodide-packages/*", (route) =>
      route.fulfill({ path: join(PACKAGES, basename(new URL(route.request().url()).pathname)) }),
    );
    await page.goto("/tests/browser/harness.html");
    await page.waitForFunction(() => (window as unknown as { harnessReady?: Promise<boolean> }).harnessReady !== undefined);
    await page.evaluate(() => (window as unknown as { harnessReady: Promise<boolean> }).harnessReady);
    await page.evaluate(async (file) => {
      const w = window as unknown as W;
      await w.pyodide.loadPackage(`/__pyodide-packages/${file}`, { messageCallback: () => undefined });
      w.pyodide.runPython("import numpy as np, webdlpack\nfrom webdlpack import _debug");
    }, wheel);
  });

  test.afterAll(async () => {
    await page?.close();
  });

  test("np.from_dlpack(webdlpack tensor) and webdlpack.from_dlpack(ndarray) share memory (same addresses)", async () => {
    const r = await page.evaluate(() => {
      const py = (window as unknown as W).pyodide;
      return JSON.parse(String(py.runPython(`
import json
t = webdlpack.zeros((3, 4), "float32")
a = np.from_dlpack(t)
a[1, 2] = 7.5
b = np.arange(12, dtype=np.int16).reshape(3, 4)[:, ::2]  # strided
u = webdlpack.from_dlpack(b)
out = json.dumps({
    "np_addr_equal": a.ctypes.data == t.data_ptr + t.byte_offset,
    "np_sees_write": t.tolist()[1][2] == 7.5,
    "wd_addr_equal": u.data_ptr + u.byte_offset == b.ctypes.data,
    "wd_strides": list(u.strides), "wd_values": u.tolist(),
})
del a, u, t, b
out
`)));
    });
    expect(r.np_addr_equal).toBe(true);
    expect(r.np_sees_write).toBe(true);
    expect(r.wd_addr_equal).toBe(true);
    expect(r.wd_strides).toEqual([4, 2]);
    expect(r.wd_values).toEqual([[0, 2], [4, 6], [8, 10]]);
  });

  test("to_js(ndarray) is zero-copy: the JS view's byteOffset is the array's address; JS writes, NumPy sees", async () => {
    const r = await page.evaluate(() => {
      const w = window as unknown as W;
      const py = w.pyodide;
      py.runPython("arr = np.linspace(0, 1, 8, dtype=np.float32)\njt = webdlpack.to_js(arr)");
      const jt = py.globals.get("jt") as import("../../js/src/index.js").Tensor;
      const view = jt.view as Float32Array;
      const address = Number(py.runPython("arr.ctypes.data"));
      const out = { sameHeap: view.buffer === py._module.HEAPU8.buffer, offsetIsAddress: view.byteOffset === address, length: view.length };
      view[3] = -1;
      const numpySees = Number(py.runPython("float(arr[3])"));
      jt.dispose();
      py.runPython("del jt, arr");
      return { ...out, numpySees };
    });
    expect(r).toEqual({ sameHeap: true, offsetIsAddress: true, length: 8, numpySees: -1 });
  });

  test("from_js of a JS heap tensor → np.from_dlpack: same bytes, no copy", async () => {
    const r = await page.evaluate(async () => {
      const w = window as unknown as W;
      const py = w.pyodide;
      const bridge = await w.webdlpack.loadWebDLPack(py as never);
      const jt = bridge.fromPython(py.runPython("webdlpack.zeros((5,), 'int32')"));
      (jt.view as Int32Array).set([1, 2, 3, 4, 5]);
      py.globals.set("jt", jt);
      const res = JSON.parse(String(py.runPython(`
import json
t = webdlpack.from_js(jt)
a = np.from_dlpack(t)
out = json.dumps({"values": a.tolist(), "addr": int(a.ctypes.data), "copied": t.flags.is_copied})
del a
t.dispose()
out
`)));
      const first = jt.data + jt.byteOffset;
      jt.dispose();
      py.runPython("del jt, t");
      return { ...res, sameAddress: res.addr === first };
    });
    expect(r.values).toEqual([1, 2, 3, 4, 5]);
    expect(r.sameAddress).toBe(true);
    expect(r.copied).toBe(false);
  });

  test("read-only flag both ways; every deleter runs exactly once", async () => {
    const r = await page.evaluate(() => {
      const py = (window as unknown as W).pyodide;
      return JSON.parse(String(py.runPython(`
import gc, json
before, imports = _debug.export_stats(), _debug.live_imports()
ro = webdlpack.from_buffer(b"\\x01\\x02\\x03\\x04")
a = np.from_dlpack(ro)
frozen = np.arange(4, dtype=np.uint8)
frozen.flags.writeable = False
u = webdlpack.from_dlpack(frozen)
res = {"numpy_readonly": not a.flags.writeable, "webdlpack_readonly": u.flags.read_only}
del a
u.dispose()
gc.collect()
after = _debug.export_stats()
res.update(created=after["created"] - before["created"], deleted=after["deleted"] - before["deleted"],
           unknown=after["unknown_deletes"] - before["unknown_deletes"], imports_left=_debug.live_imports() - imports)
json.dumps(res)
`)));
    });
    expect(r).toEqual({ numpy_readonly: true, webdlpack_readonly: true, created: 1, deleted: 1, unknown: 0, imports_left: 0 });
  });
});
