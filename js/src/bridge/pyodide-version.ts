/**
 * The Pyodide versions webdlpack supports, and the check both loaders make.
 *
 * Each series here is tested by `make test-matrix` (the demo and every Python browser spec, under the
 * npm package pinned for it in package.json), and package.json's `peerDependencies.pyodide` declares the
 * same versions (tests/js/version-ranges.test.ts checks both against each other).
 */
import { WebDLPackError } from "../errors.js";

/** One supported Pyodide series: a major.minor, or (prereleaseOnly) the prereleases of a major.minor.0. */
export interface PyodideSeries {
  readonly major: number;
  readonly minor: number;
  /** Only the prereleases (alpha, beta, rc) of `major.minor.0` from `fromPrerelease` on; the release itself is not tested yet. */
  readonly prereleaseOnly?: { readonly fromPrerelease: string };
}

/** The supported Pyodide series, oldest first. */
export const SUPPORTED_PYODIDE: readonly PyodideSeries[] = Object.freeze([
  { major: 0, minor: 27 },
  { major: 0, minor: 28 },
  { major: 0, minor: 29 },
  { major: 314, minor: 0 },
  { major: 315, minor: 0, prereleaseOnly: { fromPrerelease: "alpha.2" } },
]);

/** The supported range in words, for messages. */
export const SUPPORTED_PYODIDE_TEXT = "Pyodide 0.27, 0.28, 0.29, 314 and 315 (alpha.2 and later prereleases)";

/** A parsed Pyodide version: `pyodide.version` ("0.27.8", "315.0.0a2") or an npm version ("315.0.0-alpha.2"). */
export interface PyodideVersion {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  /** "alpha.2", "beta.1", "rc.1", "dev.0"; undefined for a release. */
  readonly prerelease?: string;
}

const PRERELEASE_NAMES: Readonly<Record<string, string>> = { a: "alpha", b: "beta", rc: "rc", dev: "dev" };
const VERSION_RE = /^(\d+)\.(\d+)\.(\d+)(?:-?\.?(a|b|rc|dev|alpha|beta)\.?(\d+))?$/;

/** Parse a Pyodide version string, or undefined when it is not one. */
export function parsePyodideVersion(text: string): PyodideVersion | undefined {
  const m = VERSION_RE.exec(text.trim());
  if (m === null) return undefined;
  const version = { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
  if (m[4] === undefined) return version;
  return { ...version, prerelease: `${PRERELEASE_NAMES[m[4]] ?? m[4]}.${m[5]}` };
}

const PRERELEASE_ORDER = ["dev", "alpha", "beta", "rc"];

/** Order of two prerelease tags ("alpha.2" < "beta.1" < "rc.1"). */
function comparePrerelease(a: string, b: string): number {
  const [an, ai] = a.split(".");
  const [bn, bi] = b.split(".");
  const byName = PRERELEASE_ORDER.indexOf(an ?? "") - PRERELEASE_ORDER.indexOf(bn ?? "");
  return byName !== 0 ? byName : Number(ai) - Number(bi);
}

/** True when `version` is in a supported series. */
export function isSupportedPyodide(version: PyodideVersion): boolean {
  return SUPPORTED_PYODIDE.some((s) => {
    if (s.major !== version.major || s.minor !== version.minor) return false;
    if (s.prereleaseOnly === undefined) return version.prerelease === undefined;
    return (
      version.patch === 0 &&
      version.prerelease !== undefined &&
      comparePrerelease(version.prerelease, s.prereleaseOnly.fromPrerelease) >= 0
    );
  });
}

/**
 * Throw UNSUPPORTED (field `pyodide.version`) unless `version` (what `pyodide.version` says) is in
 * {@link SUPPORTED_PYODIDE}. `fn` names the caller in the message.
 */
export function checkPyodideVersion(version: unknown, fn: string): void {
  const parsed = typeof version === "string" ? parsePyodideVersion(version) : undefined;
  if (parsed !== undefined && isSupportedPyodide(parsed)) return;
  throw new WebDLPackError(
    "UNSUPPORTED",
    `${fn}: Pyodide ${String(version)} is not supported; webdlpack supports ${SUPPORTED_PYODIDE_TEXT}`,
    { field: "pyodide.version", value: version, expected: SUPPORTED_PYODIDE_TEXT },
  );
}
