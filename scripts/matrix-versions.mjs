/**
 * The versions `make test-matrix` tests, read from package.json (the one place they are pinned): each
 * package webdlpack supports at its newest version (devDependencies under its own name) and at its floor
 * (an npm alias, e.g. "pyodide-0-27": "npm:pyodide@0.27.8"). Used by scripts/test-matrix.mjs and the tests
 * that run every supported Pyodide (tests/js/pyodide-allocator.test.ts, tests/js/version-ranges.test.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(fileURLToPath(import.meta.url), "..", "..");

/**
 * Frameworks with adapters, each one or more npm packages that move together (TF.js: core + WebGPU backend), and
 * `uses`: what a browser spec's source says (code or comments, any case) when it touches the framework, directly or
 * through a page or script it loads ({@link frameworkSpecs}). It errs on the side of running a spec.
 */
export const FRAMEWORKS = Object.freeze([
  { name: "onnxruntime-web", packages: ["onnxruntime-web"], uses: /onnxruntime|\bort\b/i },
  {
    name: "TF.js",
    packages: ["@tensorflow/tfjs-core", "@tensorflow/tfjs-backend-webgpu"],
    uses: /tfjs|tensorflow|\btf\./i,
  },
  { name: "Transformers.js", packages: ["@huggingface/transformers"], uses: /transformers/i },
  { name: "LiteRT.js", packages: ["@litertjs/core"], uses: /litert/i },
]);

/** The browser specs (tests/browser/*.spec.ts, sorted) that touch `framework`: what `make test-matrix` runs at its versions. */
export function frameworkSpecs(framework, root = ROOT) {
  const dir = join(root, "tests", "browser");
  return readdirSync(dir)
    .filter((f) => f.endsWith(".spec.ts") && framework.uses.test(readFileSync(join(dir, f), "utf8")))
    .sort()
    .map((f) => `tests/browser/${f}`);
}

/** Compare dotted versions numerically ("0.29.5" < "314.0.7"; a prerelease sorts before its release). */
export function compareVersions(a, b) {
  const [ca, pa = ""] = a.split("-");
  const [cb, pb = ""] = b.split("-");
  const na = ca.split(".").map(Number);
  const nb = cb.split(".").map(Number);
  for (let i = 0; i < 3; i++) if (na[i] !== nb[i]) return (na[i] ?? 0) - (nb[i] ?? 0);
  if (pa === pb) return 0;
  if (pa === "") return 1;
  if (pb === "") return -1;
  return pa < pb ? -1 : 1;
}

/**
 * Every installed version of `pkg`: [{install, version}], oldest first. `install` is the folder under
 * node_modules (the package's own name, or the alias).
 * @param {string} pkg
 * @param {string} [root]
 * @returns {{install: string, version: string}[]}
 */
export function installedVersions(pkg, root = ROOT) {
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  const out = [];
  for (const [name, spec] of Object.entries(manifest.devDependencies ?? {})) {
    if (name === pkg) out.push({ install: name, version: spec });
    else if (spec.startsWith(`npm:${pkg}@`)) out.push({ install: name, version: spec.slice(pkg.length + 5) });
  }
  return out.sort((a, b) => compareVersions(a.version, b.version));
}

/** The Pyodide versions tested, oldest first. */
export function pyodideVersions(root = ROOT) {
  return installedVersions("pyodide", root);
}

/** The oldest and the newest Pyodide tested: what `./run test` runs (suite pyodide-range, test-matrix.mjs --quick). */
export function pyodideRangeEnds(root = ROOT) {
  const all = pyodideVersions(root);
  return [all[0], all[all.length - 1]];
}

/**
 * A framework's tested versions, oldest first: [{version, packages: {name: install}}], one per version
 * that every one of its packages has.
 */
export function frameworkVersions(framework, root = ROOT) {
  const [first, ...rest] = framework.packages.map((p) => installedVersions(p, root));
  return first
    .filter(({ version }) => rest.every((list) => list.some((x) => x.version === version)))
    .map(({ version }) => ({
      version,
      packages: Object.fromEntries(
        framework.packages.map((p, i) => [p, [first, ...rest][i].find((x) => x.version === version).install]),
      ),
    }));
}

/** $WEBDLPACK_PACKAGES (scripts/serve.mjs) serving the given installs under their packages' names. */
export function servedPackages(packages) {
  return Object.entries(packages)
    .filter(([name, install]) => name !== install)
    .map(([name, install]) => `${name}=${install}`)
    .join(",");
}
