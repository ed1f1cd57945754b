/**
 * The version ranges package.json declares (peerDependencies) are the ones the code accepts at run time and
 * the ones `make test-matrix` tests: every pinned version (scripts/matrix-versions.mjs) is inside both, and
 * versions just outside are refused by both.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import {
  checkFrameworkFeature,
  checkFrameworkVersion,
  FLOOR_FEATURES,
  FRAMEWORK_FLOORS,
} from "../../js/src/adapters/compat/versions.js";
import { bindLiteRtToContext, tensorToLiteRt } from "../../js/src/adapters/litert.js";
import type { LiteRtLike } from "../../js/src/adapters/litert-types.js";
import { transformersOptions } from "../../js/src/adapters/transformers.js";
import type { WebDLPackContext } from "../../js/src/context/index.js";
import { bindOrtToContext } from "../../js/src/adapters/ort.js";
import { ortDeviceRoute } from "../../js/src/adapters/compat/ort-device.js";
import type { OrtLike } from "../../js/src/adapters/framework-types.js";
import { isSupportedPyodide, parsePyodideVersion } from "../../js/src/bridge/pyodide-version.js";
import { WebDLPackError } from "../../js/src/errors.js";
import { repoRoot } from "./helpers.js";

/** npm's own range semantics (the semver package npm uses; typed here for what the test calls). */
const semver = createRequire(import.meta.url)("semver") as {
  satisfies(version: string, range: string): boolean;
  gt(a: string, b: string): boolean;
  minVersion(range: string): { version: string } | null;
};

interface Installed {
  install: string;
  version: string;
}
interface MatrixFramework {
  name: string;
  packages: string[];
  uses: RegExp;
}
const matrix = (await import(pathToFileURL(join(repoRoot(), "scripts/matrix-versions.mjs")).href)) as {
  installedVersions(pkg: string): Installed[];
  pyodideRangeEnds(): Installed[];
  FRAMEWORKS: readonly MatrixFramework[];
  frameworkSpecs(framework: MatrixFramework): string[];
};
const peers = (
  JSON.parse(readFileSync(join(repoRoot(), "package.json"), "utf8")) as {
    peerDependencies: Record<string, string>;
  }
).peerDependencies;

test("Pyodide: package.json's range, the runtime check and the pinned versions agree", () => {
  const range = peers.pyodide!;
  const pinned = matrix.installedVersions("pyodide").map((v) => v.version);
  const outside = ["0.26.4", "0.30.0", "313.0.0", "315.0.0-alpha.1", "315.0.0", "316.0.0-alpha.1", "0.27.0-alpha.1"];
  for (const v of pinned) {
    assert.ok(semver.satisfies(v, range), `${v} in ${range}`);
    assert.ok(isSupportedPyodide(parsePyodideVersion(v)!), `runtime accepts ${v}`);
  }
  for (const v of outside) {
    assert.ok(!semver.satisfies(v, range), `${v} not in ${range}`);
    assert.ok(!isSupportedPyodide(parsePyodideVersion(v)!), `runtime refuses ${v}`);
  }
  // Pyodide says its version the Python way.
  assert.deepEqual(parsePyodideVersion("315.0.0a2"), parsePyodideVersion("315.0.0-alpha.2"));
  assert.equal(parsePyodideVersion("0.27.8")?.prerelease, undefined);
  assert.equal(parsePyodideVersion("latest"), undefined);
});

test("onnxruntime-web: package.json's range, the adapter's check and the pinned versions agree", () => {
  const range = peers["onnxruntime-web"]!;
  const fakeOrt = (web: string) => ({ env: { webgpu: {}, versions: { web, common: web } } }) as unknown as OrtLike;
  const pinned = matrix.installedVersions("onnxruntime-web").map((v) => v.version);
  assert.ok(pinned.length >= 2, "a floor and the newest");
  for (const v of pinned) {
    assert.ok(semver.satisfies(v, range), `${v} in ${range}`);
    assert.doesNotThrow(() => ortDeviceRoute(fakeOrt(v)));
  }
  assert.equal(semver.minVersion(range)?.version, pinned[0], "the floor is pinned");
  for (const v of ["1.20.0", "1.22.0"]) {
    assert.ok(!semver.satisfies(v, range));
    assert.throws(
      () => ortDeviceRoute(fakeOrt(v)),
      (err: unknown) =>
        err instanceof WebDLPackError &&
        err.code === "UNSUPPORTED" &&
        err.field === "ort.env.versions.web" &&
        err.value === v &&
        /onnxruntime-web 1\.23\.0 or later/.test(err.message),
    );
  }
  // Binding refuses it before touching the context (never BAD_DEVICE for an old ORT).
  assert.throws(
    () => bindOrtToContext(fakeOrt("1.22.0"), {} as never),
    (err: unknown) => err instanceof WebDLPackError && err.code === "UNSUPPORTED" && err.value === "1.22.0",
  );
  assert.equal(ortDeviceRoute(fakeOrt("1.23.0")), "own-request");
  assert.equal(ortDeviceRoute(fakeOrt("1.29.0")), "own-request");
  assert.equal(ortDeviceRoute(fakeOrt("1.30.0")), "session-options");
  assert.equal(ortDeviceRoute(fakeOrt("1.31.0-dev.20260914")), "session-options");
});

test("every framework: package.json declares >= the adapters' floor, and the floor is a pinned (tested) version", () => {
  for (const [pkg, floor] of Object.entries(FRAMEWORK_FLOORS)) {
    assert.equal(peers[pkg], `>=${floor}`, `${pkg}'s peer range`);
    assert.equal(matrix.installedVersions(pkg)[0]?.version, floor, `${pkg} ${floor} is pinned for the matrix`);
  }
  assert.deepEqual(
    Object.keys(FRAMEWORK_FLOORS).sort(),
    Object.keys(peers)
      .filter((p) => p !== "pyodide")
      .sort(),
  );
});

test("a framework older than its floor is UNSUPPORTED naming the version and the range; unknown passes", () => {
  assert.doesNotThrow(() => checkFrameworkVersion("@tensorflow/tfjs-core", "4.22.0", "tf.version_core"));
  assert.doesNotThrow(() => checkFrameworkVersion("@tensorflow/tfjs-core", "4.23.0-rc.0", "tf.version_core"));
  assert.doesNotThrow(() => checkFrameworkVersion("@tensorflow/tfjs-core", undefined, "tf.version_core"));
  for (const bad of ["4.20.0", "3.21.0", "x", 4]) {
    assert.throws(
      () => checkFrameworkVersion("@tensorflow/tfjs-core", bad, "tf.version_core"),
      (err: unknown) =>
        err instanceof WebDLPackError &&
        err.code === "UNSUPPORTED" &&
        err.field === "tf.version_core" &&
        err.value === bad &&
        err.expected === "@tensorflow/tfjs-core 4.22.0 or later" &&
        err.message.includes(`@tensorflow/tfjs-core ${bad} is not supported`),
    );
  }
});

/** An UNSUPPORTED error naming `value` in `field` and `pkg`'s range ("<pkg> <floor> or later"). */
function unsupported(pkg: string, field: string, value: unknown): (err: unknown) => boolean {
  return (err: unknown) =>
    err instanceof WebDLPackError &&
    err.code === "UNSUPPORTED" &&
    err.field === field &&
    err.value === value &&
    err.expected === `${pkg} ${FRAMEWORK_FLOORS[pkg]} or later` &&
    err.message.includes(`${pkg} ${FRAMEWORK_FLOORS[pkg]} or later`);
}

test("Transformers.js: its env.version is checked by transformersOptions, where the adapter meets Transformers.js", () => {
  const pkg = "@huggingface/transformers";
  const device = { label: "shared" } as GPUDevice;
  const ctx = { getWebGPUDevice: () => device } as unknown as WebDLPackContext;
  const pinned = matrix.installedVersions(pkg).map((v) => v.version);
  // The floor, the newest pinned, a later prerelease; env without a version and no env are not checked.
  for (const env of [...pinned.map((version) => ({ version })), { version: "4.4.0-next.1" }, {}, undefined]) {
    const options = transformersOptions(ctx, {}, env === undefined ? {} : { env });
    assert.equal(options.device, "webgpu");
    assert.deepEqual(options.session_options.executionProviders, [{ name: "webgpu", device }]);
  }
  for (const version of ["4.3.0", "4.0.0", "4.0.0-next.11", "3.8.1"]) {
    assert.ok(!semver.satisfies(version, peers[pkg]!), `${version} not in ${peers[pkg]}`);
    assert.throws(() => transformersOptions(ctx, {}, { env: { version } }), unsupported(pkg, "env.version", version));
  }
  // Refused before the context is touched.
  assert.throws(
    () => transformersOptions({} as never, {}, { env: { version: "4.0.0" } }),
    unsupported(pkg, "env.version", "4.0.0"),
  );
});

test("LiteRT.js (no version at run time): the floor's feature is there in every pinned version, its lack is UNSUPPORTED", async () => {
  const pkg = "@litertjs/core";
  const installs = matrix.installedVersions(pkg);
  assert.ok(installs.length >= 2, "a floor and the newest");
  const field = `litert.${FLOOR_FEATURES[pkg]}`;
  for (const { install } of installs) {
    const module = (await import(install)) as Record<string, unknown>;
    assert.doesNotThrow(() => checkFrameworkFeature(pkg, module, field), install);
    // 2.0.0's module, as far as the check sees it: the newest without the floor's feature.
    const older = { ...module, [FLOOR_FEATURES[pkg]!]: undefined } as unknown as LiteRtLike;
    assert.throws(() => checkFrameworkFeature(pkg, older, field), unsupported(pkg, field, "missing"));
    // The adapter refuses it before touching the context; something not LiteRT at all stays INVALID_ARGUMENT.
    await assert.rejects(bindLiteRtToContext(older, {} as never), unsupported(pkg, field, "missing"));
    await assert.rejects(tensorToLiteRt(older, {} as never), unsupported(pkg, field, "missing"));
  }
  await assert.rejects(
    bindLiteRtToContext({} as LiteRtLike, {} as never),
    (err: unknown) => err instanceof WebDLPackError && err.code === "INVALID_ARGUMENT" && err.field === "litert",
  );
});

test("./run test runs the oldest and the newest Pyodide of package.json's range (suite pyodide-range)", () => {
  const range = peers.pyodide!;
  const ends = matrix.pyodideRangeEnds();
  // Each Pyodide minor is tested at its last patch: the oldest is the range's floor minor.
  const minor = (v: string | undefined): string => (v ?? "").split(".").slice(0, 2).join(".");
  assert.equal(minor(ends[0]!.version), minor(semver.minVersion(range)?.version), "the oldest is the floor's minor");
  const pinned = matrix.installedVersions("pyodide").map((v) => v.version);
  assert.equal(ends[1]!.version, pinned.at(-1), "the newest pinned");
  for (const v of pinned) assert.ok(!semver.gt(v, ends[1]!.version), `${v} is not newer than ${ends[1]!.version}`);
  const runTests = readFileSync(join(repoRoot(), "scripts/run-tests.sh"), "utf8");
  assert.match(runTests, /suites=\([^)]*\bpyodide-range\b[^)]*\)/, "pyodide-range is a default suite");
  assert.match(runTests, /pyodide-range\)\s+node scripts\/test-matrix\.mjs --quick/, "it runs test-matrix.mjs --quick");
});

test("make test-matrix runs, at each framework's versions, every browser spec that calls that framework", () => {
  // What a spec calls when it uses the framework (its adapter, or the framework's own API).
  const calls: Record<string, RegExp> = {
    "onnxruntime-web": /bindOrtToContext|tensorFromOrt|tensorToOrt|InferenceSession|ort_on_gpu/,
    "TF.js": /registerTfjsWebGPUBackend|tensorToTfjs|tensorFromTfjs|tfjs_on_gpu/,
    "Transformers.js": /transformersOptions|tensorFromTransformers|transformers_pipeline/,
    "LiteRT.js": /bindLiteRtToContext|tensorToLiteRt|tensorFromLiteRt/,
  };
  const dir = join(repoRoot(), "tests", "browser");
  const specs = readdirSync(dir).filter((f) => f.endsWith(".spec.ts"));
  assert.deepEqual(matrix.FRAMEWORKS.map((f) => f.name).sort(), Object.keys(calls).sort());
  for (const framework of matrix.FRAMEWORKS) {
    const run = new Set(matrix.frameworkSpecs(framework));
    const calling = specs.filter((f) => calls[framework.name]!.test(readFileSync(join(dir, f), "utf8")));
    assert.ok(calling.length > 0, `some spec calls ${framework.name}`);
    for (const f of calling)
      assert.ok(run.has(`tests/browser/${f}`), `${f} calls ${framework.name}: the matrix runs it`);
  }
  const ort = new Set(matrix.frameworkSpecs(matrix.FRAMEWORKS.find((f) => f.name === "onnxruntime-web")!));
  for (const f of ["teardown", "python-only-pyscript", "python-only-jupyterlite", "worker"])
    assert.ok(ort.has(`tests/browser/${f}.spec.ts`), `${f} runs at ORT's floor`);
  assert.ok(!ort.has("tests/browser/context-setup.spec.ts"), "a spec without a framework does not");
});
