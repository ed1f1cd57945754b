/**
 * The npm tarball ships what users need and nothing else: `npm pack --dry-run --json`
 * lists the built JS with its declarations, the Python wheel, the C side module,
 * the static library and the C headers — no object files, no source maps (their
 * sources are not shipped), no tests, no build leftovers — every package.json
 * "exports" target is in it, and the README states its size truthfully.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { PYTHON_WHEEL_FILENAME } from "../../js/src/assets.js";
import { repoRoot } from "./helpers.js";

interface PackFile {
  path: string;
  size: number;
}
interface Pack {
  size: number;
  unpackedSize: number;
  entryCount: number;
  files: PackFile[];
}

const root = repoRoot();
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

function pack(): Pack {
  assert.ok(existsSync(join(root, "js/dist/index.js")), "run `make build` first: js/dist is missing");
  const out = execFileSync(npm, ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: root,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });
  return (JSON.parse(out) as Pack[])[0]!;
}

const packed = pack();
const paths = packed.files.map((f) => f.path);

test("the tarball has no object files, source maps, tests or build leftovers", () => {
  const unwanted = paths.filter(
    (p) =>
      /\.(o|map|tgz|pyc)$/.test(p) ||
      /(^|\/)(tests?|__pycache__|obj|examples)\//.test(p) ||
      /\.(test|spec)\.[cm]?[jt]s$/.test(p) ||
      p.startsWith("wasm/src/") ||
      p.startsWith("py/") ||
      p.startsWith("js/src/") ||
      p === "js/dist/webdlpack.bundle.js",
  ); // the repo's prebuilt bundle (demo, tests): users import the modules
  assert.deepEqual(unwanted, []);
  assert.ok(
    paths.every(
      (p) =>
        p === "package.json" ||
        p === "README.md" ||
        p === "LICENSE" ||
        p.startsWith("js/dist/") ||
        p.startsWith("wasm/include/webdlpack/") ||
        p === "wasm/build/libwebdlpack.a",
    ),
    `unexpected top-level entries: ${paths.filter((p) => !p.startsWith("js/dist/")).join(", ")}`,
  );
});

test("the tarball has the JS with declarations, the wheel, the side module, the static library and the headers", () => {
  const must = [
    "package.json",
    "README.md",
    "js/dist/index.js",
    "js/dist/index.d.ts",
    "js/dist/adapters/index.js",
    "js/dist/adapters/index.d.ts",
    "js/dist/assets-embedded.js",
    `js/dist/python/${PYTHON_WHEEL_FILENAME}`,
    "LICENSE",
    "js/dist/wasm/libwebdlpack.so",
    "wasm/build/libwebdlpack.a",
    "wasm/include/webdlpack/dlpack.h",
    "wasm/include/webdlpack/host.h",
    "wasm/include/webdlpack/webdlpack.h",
  ];
  assert.deepEqual(
    must.filter((p) => !paths.includes(p)),
    [],
    "missing from the tarball",
  );
  // Every module has its declarations, and every declaration its module.
  const js = paths.filter((p) => p.endsWith(".js"));
  assert.deepEqual(
    js.filter((p) => !paths.includes(p.replace(/\.js$/, ".d.ts"))),
    [],
    "modules without .d.ts",
  );
  assert.ok(js.length >= 40, `only ${js.length} modules`);
});

test("every package.json export resolves to a file in the tarball", () => {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    exports: Record<string, Record<string, string>>;
  };
  const targets = Object.values(pkg.exports)
    .flatMap((e) => Object.values(e))
    .map((t) => t.replace(/^\.\//, ""));
  assert.ok(targets.length >= 4);
  assert.deepEqual(
    targets.filter((t) => !paths.includes(t)),
    [],
  );
});

test("README states the package size (packed and unpacked, within 15% of npm pack's)", () => {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const m = /npm package: ([\d.]+) kB packed, ([\d.]+) kB unpacked, (\d+) files/.exec(readme);
  assert.ok(m, "README has no line `npm package: N kB packed, M kB unpacked, K files`");
  const near = (stated: number, actual: number, what: string): void =>
    assert.ok(Math.abs(stated - actual) / actual <= 0.15, `${what}: README says ${stated}, npm pack gives ${actual}`);
  near(Number(m[1]) * 1000, packed.size, "packed bytes");
  near(Number(m[2]) * 1000, packed.unpackedSize, "unpacked bytes");
  near(Number(m[3]), packed.entryCount, "files");
});
