/**
 * assets.ts finds the shipped wheel and side module: an explicit URL or assetBase (file: URLs
 * read from disk under Node), next to the module, else the embedded copy; bytes are accepted
 * only with the right magic, and an explicit location that fails is a typed error naming it.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { ASSET_PATHS, assetURL, defaultWheelURL, loadAssetBytes } from "../../js/src/assets.js";
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

test("no option: next to the module if there, else the embedded copy, byte for byte the built files", async () => {
  const found = await loadAssetBytes("wheel");
  const expected = await loadAssetBytes("wheel", { url: new URL(ASSET_PATHS.wheel, dist) });
  const nextToModule = existsSync(defaultWheelURL());
  assert.equal(found.source, nextToModule ? defaultWheelURL().href : "embedded");
  assert.deepEqual(found.bytes, expected.bytes);
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
