/**
 * One test, three sources of the wasm32 layout: emcc compiling the header
 * (build/layout/wasm32.json), the JS codec's LAYOUT, and Python ctypes inside
 * Pyodide (webdlpack.layout()). Fails if any of them drifts.
 */
import { test, expect } from "./fixtures.js";

test("emcc, the JS codec and Python ctypes agree on every size and offset", async ({ shared }) => {
  const r = await shared.evaluate(async () => {
    const w = window as unknown as {
      pyodide: { runPython(c: string): { toJs(o: object): unknown } };
      webdlpack: typeof import("../../js/src/index.js");
    };
    await w.webdlpack.loadWebDLPack(w.pyodide as never);
    const emcc = await (await fetch("/build/layout/wasm32.json")).json();
    const python = w.pyodide
      .runPython("import webdlpack; webdlpack.layout()")
      .toJs({ dict_converter: Object.fromEntries });
    type L = Record<string, Record<string, number>>;
    return { emcc: emcc as L, js: JSON.parse(JSON.stringify(w.webdlpack.LAYOUT)) as L, python: python as L };
  });
  const structs = [
    "DLPackVersion",
    "DLDevice",
    "DLDataType",
    "DLTensor",
    "DLManagedTensor",
    "DLManagedTensorVersioned",
  ];
  const pick = (src: Record<string, Record<string, number>>) =>
    Object.fromEntries(
      structs.map((s) => [
        s,
        Object.fromEntries(
          Object.entries(src[s] ?? {})
            .filter(([k]) => k !== "align")
            .sort(),
        ),
      ]),
    );
  const emcc = pick(r.emcc),
    js = pick(r.js),
    python = pick(r.python);
  expect(emcc.DLTensor!.size).toBe(40);
  expect(emcc.DLTensor!.byte_offset).toBe(32);
  expect(emcc.DLManagedTensorVersioned!.size).toBe(64);
  expect(emcc.DLManagedTensorVersioned!.dl_tensor).toBe(24);
  expect(js).toEqual(emcc);
  expect(python).toEqual(emcc);
});
