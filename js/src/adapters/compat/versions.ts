/**
 * The oldest version of each framework the adapters support: what package.json's peerDependencies declare
 * and `make test-matrix` tests (tests/js/version-ranges.test.ts checks the three agree), and the checks an
 * adapter makes when it first meets a framework: by the version it says (ORT, TF.js, Transformers.js), or,
 * for one that does not say it (LiteRT.js), by a member the floor has and older versions lack.
 */
import { WebDLPackError } from "../../errors.js";

/** Oldest supported version per framework (npm package name). */
export const FRAMEWORK_FLOORS: Readonly<Record<string, string>> = Object.freeze({
  "onnxruntime-web": "1.23.0",
  // 4.8–4.20 passed the adapter specs too, but a backend-webgpu alias pins its exact tfjs-core as a peer, so an
  // older pair cannot be installed beside 4.22 for the matrix: only what the matrix runs is declared.
  "@tensorflow/tfjs-core": "4.22.0",
  "@tensorflow/tfjs-backend-webgpu": "4.22.0",
  // Older 4.x bundle an ORT (1.25/1.26 dev) that needs the device another way, and Transformers.js does not
  // hand its ORT to the adapter.
  "@huggingface/transformers": "4.3.1",
  "@litertjs/core": "2.5.2",
});

/**
 * For frameworks that do not say their version at run time: a function of the module that the floor has and
 * the newest version before it lacks (@litertjs/core 2.0.0 has no `supportsFeature`; 2.5.0/2.5.1 were not published).
 */
export const FLOOR_FEATURES: Readonly<Record<string, string>> = Object.freeze({
  "@litertjs/core": "supportsFeature",
});

/** The numeric major.minor.patch of a version string ("1.31.0-dev.2026" → [1, 31, 0]); NaN parts if not one. */
function numbers(version: string): number[] {
  return version
    .split(/[-+]/)[0]!
    .split(".")
    .map((x) => Number.parseInt(x, 10));
}

/** True when `version` is at least `floor` (prereleases count as their release). */
export function atLeastVersion(version: string, floor: string): boolean {
  const v = numbers(version);
  const f = numbers(floor);
  for (let i = 0; i < 3; i++) if ((v[i] ?? 0) !== (f[i] ?? 0)) return (v[i] ?? 0) > (f[i] ?? 0);
  return true;
}

/**
 * Throw UNSUPPORTED (field `field`, value `version`) when `version` is a string older than `pkg`'s floor
 * or not a version at all. A framework that does not say its version (undefined) passes.
 */
export function checkFrameworkVersion(pkg: string, version: unknown, field: string, why = ""): void {
  if (version === undefined) return;
  const floor = FRAMEWORK_FLOORS[pkg]!;
  const text = String(version);
  if (typeof version === "string" && numbers(text).every(Number.isFinite) && atLeastVersion(text, floor)) return;
  const expected = `${pkg} ${floor} or later`;
  throw new WebDLPackError("UNSUPPORTED", `${pkg} ${text} is not supported${why}; webdlpack supports ${expected}`, {
    field,
    value: version,
    expected,
  });
}

/**
 * Throw UNSUPPORTED (field `field`, value "missing") when `module` lacks the function {@link FLOOR_FEATURES}
 * names for `pkg`: an older version, whose number the framework does not say, so the error names the range.
 */
export function checkFrameworkFeature(pkg: string, module: object, field: string): void {
  const member = FLOOR_FEATURES[pkg]!;
  if (typeof (module as Record<string, unknown>)[member] === "function") return;
  const floor = FRAMEWORK_FLOORS[pkg]!;
  const expected = `${pkg} ${floor} or later`;
  throw new WebDLPackError(
    "UNSUPPORTED",
    `this ${pkg} is older than ${floor}: it has no ${member}(), which ${floor} added (it does not say its ` +
      `version); webdlpack supports ${expected}`,
    { field, value: "missing", expected },
  );
}
