/**
 * The Pyodide wheel installs where its tags say it fits and is refused elsewhere, by loadWebDLPack and by
 * micropip alike; once installed, the bridge's `info` says what runs. Pyodide 314 (the npm dependency) under
 * Node; a copy of the shipped wheel retagged for an ABI no Pyodide has (`pyemscripten_2027_0_wasm32`) stands
 * for a wheel built for another Pyodide.
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { loadPyodide } from "pyodide";
import { PYTHON_WHEEL_FILENAME } from "../../js/src/assets.js";
import { pythonRuntimes } from "../../js/src/context/index.js";
import { loadWebDLPack } from "../../js/src/bridge/pyodide.js";
import { tagFits, wheelTags } from "../../js/src/bridge/wheel-fit.js";
import { WebDLPackError } from "../../js/src/errors.js";
import { repoRoot } from "./helpers.js";

const indexURL = `${dirname(createRequire(import.meta.url).resolve("pyodide/package.json"))}/`;
const shipped = pathToFileURL(join(repoRoot(), "js/dist/python", PYTHON_WHEEL_FILENAME));
const micropip = join(repoRoot(), "build/vendor/micropip-0.11.1-py3-none-any.whl");
const OTHER_ABI = "pyemscripten_2027_0_wasm32";

type Pyodide = Awaited<ReturnType<typeof loadPyodide>>;

async function pyodide(): Promise<Pyodide> {
  return loadPyodide({ indexURL });
}

/** The shipped wheel with its WHEEL tags replaced by one for {@link OTHER_ABI}, written under a temp folder. */
async function retaggedWheel(py: Pyodide): Promise<string> {
  const data = readFileSync(shipped);
  py.globals.set("__wheel", new Uint8Array(data));
  const out = py.runPython(`
import io, re, zipfile
src, dst = zipfile.ZipFile(io.BytesIO(__wheel.to_bytes())), io.BytesIO()
with zipfile.ZipFile(dst, "w") as z:
    for item in src.infolist():
        body = src.read(item)
        if item.filename.endswith(".dist-info/WHEEL"):
            body = re.sub(rb"Tag: .*\\n", b"", body) + b"Tag: cp312-abi3-${OTHER_ABI}\\n"
        z.writestr(item, body)
dst.getvalue()
`) as { toJs(): Uint8Array; destroy(): void };
  const bytes = out.toJs();
  out.destroy();
  const path = join(mkdtempSync(join(tmpdir(), "webdlpack-wheel-")), `webdlpack-0.1.0-cp312-abi3-${OTHER_ABI}.whl`);
  writeFileSync(path, bytes);
  return path;
}

test("the wheel's tags are read from its zip and matched as micropip does", async () => {
  const tags = await wheelTags(new Uint8Array(readFileSync(shipped)));
  assert.deepEqual(
    tags.map((t) => t.split("-")[2]),
    PYTHON_WHEEL_FILENAME.replace(/^webdlpack-0\.1\.0-cp312-abi3-|\.whl$/g, "").split("."),
  );
  assert.ok(tags.every((t) => t.startsWith("cp312-abi3-")));
  assert.deepEqual(await wheelTags(new TextEncoder().encode("not a zip")), []);
  // A runtime whose DecompressionStream lacks "deflate-raw" (Node before 20.12) reads them through node:zlib.
  const web = globalThis.DecompressionStream;
  globalThis.DecompressionStream = class {
    constructor() {
      throw new TypeError("deflate-raw is not supported");
    }
  } as unknown as typeof DecompressionStream;
  try {
    assert.deepEqual(await wheelTags(new Uint8Array(readFileSync(shipped))), tags);
  } finally {
    globalThis.DecompressionStream = web;
  }
  const plat = "pyemscripten_2026_0_wasm32";
  assert.ok(tagFits(`cp312-abi3-${plat}`, plat, 14)); // abi3: this Python or newer
  assert.ok(!tagFits(`cp315-abi3-${plat}`, plat, 14));
  assert.ok(tagFits(`cp314-cp314-${plat}`, plat, 14) && !tagFits(`cp313-cp313-${plat}`, plat, 14));
  assert.ok(tagFits("py3-none-any", plat, 14)); // a pure-Python wheel fits everywhere
  assert.ok(tagFits(`cp312-abi3-pyodide_2024_0_wasm32.${plat}`, plat, 14)); // a compressed tag set
  assert.ok(!tagFits("cp312-abi3-pyemscripten_2027_0_wasm32", plat, 14));
  assert.ok(!tagFits("cp312-abi3-linux_x86_64", plat, 14) && !tagFits("garbage", plat, 14));
});

test("loadWebDLPack installs the shipped wheel in Pyodide 314 and says what runs", async () => {
  const py = await pyodide();
  const bridge = await loadWebDLPack(py, { wheelURL: shipped });
  assert.equal(bridge.info.host, "pyodide");
  assert.equal(bridge.info.pyodide, py.version);
  assert.equal(bridge.info.platform, "pyemscripten_2026_0_wasm32");
  assert.match(PYTHON_WHEEL_FILENAME, new RegExp(`-cp312-abi3-.*\\b${bridge.info.platform}\\b`));
  assert.equal(bridge.info.exchange, "native");
  assert.equal(bridge.info.capsule_destructor, "native");
  assert.deepEqual(bridge.info.fallback, {});
  // The page's context lists it too: which Pyodide, and the native exchange.
  const runtime = pythonRuntimes().find((r) => r.pyodide === py.version);
  assert.equal(runtime?.exchange, "native");
});

test("loadWebDLPack refuses a wheel tagged for another Pyodide ABI before unpacking it", async () => {
  const py = await pyodide();
  const path = await retaggedWheel(py);
  for (const installer of ["loadPackage", "micropip"] as const) {
    const err = await loadWebDLPack(py, {
      wheelURL: pathToFileURL(path),
      installer,
      micropipURL: pathToFileURL(micropip),
    }).then(
      () => assert.fail(`${installer}: a wheel for ${OTHER_ABI} was installed`),
      (e: unknown) => e,
    );
    assert.ok(err instanceof WebDLPackError && err.code === "VERSION_MISMATCH", String(err));
    assert.equal(err.field, "wheelURL");
    assert.match(err.message, new RegExp(`Pyodide ${py.version.replace(/\./g, "\\.")} \\(pyemscripten_2026_0_wasm32`));
    assert.match(err.message, new RegExp(OTHER_ABI));
  }
  assert.equal(py.runPython("import importlib.util; importlib.util.find_spec('webdlpack') is None"), true);
});

test("micropip.install(url) takes the shipped wheel and refuses the retagged one", async () => {
  const py = await pyodide();
  const path = await retaggedWheel(py);
  await py.loadPackage(micropip, { messageCallback: () => undefined });
  const name = path.split("/").pop() ?? "";
  py.FS.writeFile(`/tmp/${name}`, readFileSync(path));
  py.globals.set("__other", `emfs:/tmp/${name}`);
  const refused = await py.runPythonAsync(`
import micropip
try:
    await micropip.install(__other, deps=False)
    refused = None
except ValueError as err:
    refused = str(err)
refused
`);
  assert.equal(typeof refused, "string", "micropip installed a wheel for another ABI");
  py.FS.writeFile(`/tmp/${PYTHON_WHEEL_FILENAME}`, readFileSync(shipped));
  const version = await py.runPythonAsync(`
await micropip.install("emfs:/tmp/${PYTHON_WHEEL_FILENAME}", deps=False)
import webdlpack
webdlpack.__version__
`);
  assert.equal(version, "0.1.0");
});
