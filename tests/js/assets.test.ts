/**
 * assets.ts finds the shipped wheel and side module: an explicit URL or assetBase (file: URLs
 * read from disk under Node), the embedded copies once the app opted in (webdlpack/embedded), else
 * next to the module; bytes are accepted only with the right magic, and a location that fails is a
 * typed error naming the fixes.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { ASSET_PATHS, assetURL, defaultWheelURL, loadAssetBytes, provideEmbeddedAssets } from "../../js/src/assets.js";
import { useEmbeddedAssets } from "../../js/src/embedded.js";
import { isCode, repoRoot } from "./helpers.js";

const dist = pathToFileURL(join(repoRoot(), "js", "dist") + "/");

test("explicit url and assetBase load the files of js/dist (file: URLs read from disk)", async () => {
  assert.ok(existsSync(new URL(ASSET_PATHS.wheel, dist)), "run `make build` first");
  const wheel = await loadAssetBytes("wheel", { url: new URL(ASSET_PATHS.wheel, dist) });
  assert.deepEqual([...wheel.bytes.subarray(0, 4)], [0x50, 0x4b, 3, 4]);
  assert.equal(wheel.source, new URL(ASSET_PATHS.wheel, dist).href);
  const clib = await loadAssetBytes("clib", { assetBase: dist.href.slice(0, -1) }); // no trailing slash: added
  assert.deepEqual([...clib.bytes.subarray(0, 4)], [0, 0x61, 0x73, 0x6d]);
  assert.equal(assetURL("clib", "https://cdn.example/wdl").href, "https://cdn.example/wdl/wasm/libwebdlpack.so");
});

test("no option, no file next to the module (a bundle esbuild made): a typed error naming the three fixes", async () => {
  assert.equal(existsSync(defaultWheelURL()), false, "the compiled tests have no python/ next to assets.js");
  await assert.rejects(
    loadAssetBytes("wheel"),
    isCode(
      "INVALID_ARGUMENT",
      /not next to its module.*Copy the package's js\/dist\/python and js\/dist\/wasm next to the bundle, or pass assetBase.*useEmbeddedAssets\(\) from 'webdlpack\/embedded'/,
    ),
  );
});

test("useEmbeddedAssets(): the embedded copies, byte for byte the built files, before any request", async () => {
  useEmbeddedAssets();
  try {
    for (const kind of ["wheel", "clib"] as const) {
      const found = await loadAssetBytes(kind);
      const expected = await loadAssetBytes(kind, { url: new URL(ASSET_PATHS[kind], dist) });
      assert.equal(found.source, "embedded");
      assert.deepEqual(found.bytes, expected.bytes);
    }
    // An explicit location still wins.
    assert.equal((await loadAssetBytes("clib", { assetBase: dist.href })).source, new URL(ASSET_PATHS.clib, dist).href);
  } finally {
    provideEmbeddedAssets(undefined);
  }
});

test("a wrong file or a missing one at an explicit location is a typed error naming the option", async () => {
  await assert.rejects(
    loadAssetBytes("wheel", { url: pathToFileURL(join(repoRoot(), "README.md")), field: "wheelURL" }),
    isCode("INVALID_ARGUMENT", /not a wheel \(zip\); field wheelURL/),
  );
  await assert.rejects(
    loadAssetBytes("clib", { assetBase: "file:///nonexistent-webdlpack-assets/" }),
    isCode("INVALID_ARGUMENT", /read failed.*field assetBase/),
  );
  assert.throws(() => assetURL("clib", "http://[bad"), isCode("INVALID_ARGUMENT", /field assetBase/));
});
