/** loadWebDLPack refuses what it can not use with typed errors, before starting anything (no unhandled rejection). */
import assert from "node:assert/strict";
import { test } from "node:test";
import { loadWebDLPackC } from "../../js/src/bridge/clib/load.js";
import { loadWebDLPack } from "../../js/src/bridge/pyodide.js";
import { WebDLPackError } from "../../js/src/errors.js";
import { Tensor } from "../../js/src/tensor/index.js";

const fakePyodide = {
  _module: {},
  version: "314.0.7",
  runPython: () => undefined,
  runPythonAsync: async () => undefined,
  registerJsModule: () => undefined,
  loadPackage: async () => undefined,
  pyimport: () => undefined,
  unpackArchive: () => undefined,
  globals: {},
};

async function rejectsWith(p: Promise<unknown>, field: string, text?: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof WebDLPackError, `expected WebDLPackError, got ${String(err)}`);
    assert.equal(err.code, "INVALID_ARGUMENT");
    assert.equal(err.field, field);
    assert.ok(err.expected, "says what was expected");
    if (text) assert.match(err.message, text);
    return true;
  });
}

test("loadWebDLPack(non-Pyodide) rejects INVALID_ARGUMENT naming `pyodide`", async () => {
  let unhandled = 0;
  const onUnhandled = (): void => {
    unhandled += 1;
  };
  process.on("unhandledRejection", onUnhandled);
  try {
    await rejectsWith(loadWebDLPack(null as never), "pyodide");
    await rejectsWith(loadWebDLPack(42 as never), "pyodide");
    await rejectsWith(loadWebDLPack({} as never), "pyodide", /no _module, version, runPython/);
    await rejectsWith(
      loadWebDLPack({ ...fakePyodide, registerJsModule: undefined } as never),
      "pyodide",
      /registerJsModule/,
    );
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(unhandled, 0, "no stray rejected promise");
  } finally {
    process.off("unhandledRejection", onUnhandled);
  }
});

test("loadWebDLPack options: unknown key, bad installer, bad URL types are typed errors", async () => {
  await rejectsWith(loadWebDLPack(fakePyodide as never, null as never), "options");
  await rejectsWith(loadWebDLPack(fakePyodide as never, { wheelUrl: "/x.whl" } as never), "options.wheelUrl");
  await rejectsWith(loadWebDLPack(fakePyodide as never, { installer: "pip" } as never), "options.installer");
  await rejectsWith(loadWebDLPack(fakePyodide as never, { wheelURL: 5 } as never), "options.wheelURL");
  await rejectsWith(loadWebDLPack(fakePyodide as never, { micropipURL: {} } as never), "options.micropipURL");
});

test("loadWebDLPackC(non-Pyodide) rejects INVALID_ARGUMENT naming `pyodide`, before touching it", async () => {
  await rejectsWith(loadWebDLPackC(null as never), "pyodide", /loadWebDLPackC needs a Pyodide instance/);
  await rejectsWith(loadWebDLPackC(undefined as never), "pyodide");
  await rejectsWith(loadWebDLPackC("pyodide" as never), "pyodide");
  await rejectsWith(loadWebDLPackC({} as never), "pyodide", /no _module/);
  await rejectsWith(loadWebDLPackC({ _module: null } as never), "pyodide", /no _module/);
});

test("loadWebDLPackC options: not an object, unknown key, wrong kinds are typed errors", async () => {
  const py = { _module: {}, version: "0.27.8" } as never; // the options are checked before the module is looked at
  await rejectsWith(loadWebDLPackC(py, null as never), "options", /bad loadWebDLPackC options/);
  await rejectsWith(loadWebDLPackC(py, 5 as never), "options");
  await rejectsWith(loadWebDLPackC(py, { URL: "/x.so" } as never), "options.URL", /unknown loadWebDLPackC option/);
  await rejectsWith(loadWebDLPackC(py, { url: 5 } as never), "options.url");
  await rejectsWith(loadWebDLPackC(py, { bytes: [0, 97, 115, 109] } as never), "options.bytes");
  await rejectsWith(loadWebDLPackC(py, { path: "" }), "options.path");
  await rejectsWith(loadWebDLPackC(py, { path: 3 } as never), "options.path");
  await rejectsWith(loadWebDLPackC(py, { context: {} } as never), "options.context");
  await rejectsWith(loadWebDLPackC(py, { onAsyncGpuError: "log" } as never), "options.onAsyncGpuError");
  await rejectsWith(loadWebDLPackC(py, { owner: "" }), "options.owner");
  await rejectsWith(loadWebDLPackC(py, { owner: 7 } as never), "options.owner");
});

test("Tensor.fromTypedArray of a non-array names field, value and expected", () => {
  assert.throws(
    () => Tensor.fromTypedArray(42 as never),
    (err: unknown) =>
      err instanceof WebDLPackError &&
      err.code === "INVALID_ARGUMENT" &&
      err.field === "array" &&
      err.value === 42 &&
      typeof err.expected === "string" &&
      err.expected.includes("TypedArray"),
  );
  assert.throws(
    () => Tensor.fromTypedArray(new ArrayBuffer(8) as never),
    (err: unknown) =>
      err instanceof WebDLPackError &&
      err.code === "BAD_DTYPE" &&
      err.field === "dtype" &&
      typeof err.expected === "string",
  );
});

test("a Pyodide outside the supported range is refused UNSUPPORTED naming its version and the range", async () => {
  for (const version of ["0.26.4", "0.30.0", "313.0.0", "316.0.0", "315.0.0a1", "315.0.0", "0.27.0a1", "dev"]) {
    for (const p of [
      loadWebDLPack({ ...fakePyodide, version } as never),
      loadWebDLPackC({ _module: {}, version } as never),
    ]) {
      await assert.rejects(p, (err: unknown) => {
        assert.ok(err instanceof WebDLPackError, String(err));
        assert.equal(err.code, "UNSUPPORTED");
        assert.equal(err.field, "pyodide.version");
        assert.equal(err.value, version);
        assert.match(err.message, new RegExp(`Pyodide ${version} is not supported.*0\\.27.*315`));
        return true;
      });
    }
  }
});
