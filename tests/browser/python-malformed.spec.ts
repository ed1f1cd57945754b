/**
 * Malformed DLPack structs through Python inside Pyodide in Chromium (issue 12, item 1): every case of
 * spec/validation-rules.json — structs, shape and strides arrays and CPU data at and past the real end of the
 * wasm memory among them — then 2 000 fuzzed structs (tests/py/struct_corpus.py). Each gives a typed error
 * (or imports); none may read past the memory end, which would trap and leave Pyodide unusable.
 */
import { test, expect } from "./fixtures.js";

type W = {
  pyodide: {
    runPython(c: string): unknown;
    FS: { writeFile(path: string, data: string): void };
  };
};

test("malformed structs at and past the wasm memory end give typed errors in Python; Pyodide keeps running", async ({
  shared,
}) => {
  test.setTimeout(120_000);
  const r = await shared.evaluate(async () => {
    const py = (window as unknown as W).pyodide;
    const text = async (url: string): Promise<string> => (await fetch(url)).text();
    py.FS.writeFile("/home/pyodide/struct_corpus.py", await text("/tests/py/struct_corpus.py"));
    py.FS.writeFile("/home/pyodide/validation-rules.json", await text("/spec/validation-rules.json"));
    const out = py.runPython(`
import json, sys
sys.path.insert(0, "/home/pyodide")
import struct_corpus
table = json.load(open("/home/pyodide/validation-rules.json"))
json.dumps({"end": struct_corpus.memory_end(), "table": struct_corpus.run_table(table, bounded=True),
            "fuzz": struct_corpus.fuzz(20261124, max_cases=2000)})
`) as string;
    return { ...JSON.parse(out), alive: py.runPython("sum(range(10))") };
  });
  expect(r.table.failures).toEqual([]);
  expect(r.table.ran).toBeGreaterThanOrEqual(80);
  expect(r.fuzz.failures).toEqual([]);
  expect(r.fuzz.cases).toBe(2000);
  expect(r.fuzz.refused).toBeGreaterThan(100);
  expect(r.end).toBeGreaterThan(1 << 20);
  expect(r.alive).toBe(45);
});

test("from_js refuses a copy argument that is not None/True/False, like from_dlpack, before JS is called", async ({
  shared,
}) => {
  const r = await shared.evaluate(async () => {
    const py = (window as unknown as W).pyodide;
    return (
      py.runPython(`
import array, webdlpack
from webdlpack.api import debug as _debug
t = webdlpack.from_buffer(array.array("f", [1.0, 2.0]))
jt = webdlpack.to_js(t)
res = []
for attempt in (lambda: webdlpack.from_js(jt, copy="x"), lambda: webdlpack.from_js(jt, copy=1),
                lambda: webdlpack.from_dlpack(t, copy="yes")):
    try:
        attempt().dispose()
        res.append("no error")
    except webdlpack.WebDLPackError as e:
        res.append(f"{type(e).__name__} {e.code.name} {e.field}")
jt.dispose()
res.append(_debug.live_exports())
res
`) as { toJs(): unknown[] }
    ).toJs();
  });
  expect(r).toEqual([
    "CopyArgumentError INVALID_ARGUMENT copy", // a WebDLPackTypeError that is also a ValueError, as in NumPy
    "CopyArgumentError INVALID_ARGUMENT copy",
    "CopyArgumentError INVALID_ARGUMENT copy",
    0,
  ]);
});
