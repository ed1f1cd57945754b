/**
 * The oldest version of each framework the adapters support: what package.json's peerDependencies declare
 * and `make test-matrix` tests (tests/js/version-ranges.test.ts checks the three agree), and the check an
 * adapter makes when it binds a framework that says its version.
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
