// The public API reports: one api/<entry>.api.md per package entry ("exports" in package.json), written by API
// Extractor from the published declarations (js/dist/**/*.d.ts), so every change to what users can import shows in a
// diff. `node scripts/api-report.mjs --update` (make api-report) rewrites them; without --update it checks them and
// exits 1 naming the entries whose surface changed (the lint suite runs it: scripts/lint.py).
// API Extractor is pinned in the Makefile (API_EXTRACTOR) and installed into build/api-tools/, outside the lockfile:
// it brings its own TypeScript (the project's TypeScript 7 has no compiler API).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const UPDATE_COMMAND = "make api-report";
const update = process.argv.includes("--update");
const toolDir = join(root, "build/api-tools");
const tool = join(toolDir, "node_modules/@microsoft/api-extractor");
if (!existsSync(tool)) {
  console.error("API Extractor is not installed in build/api-tools/: `make api-tools` installs the pinned version");
  process.exit(2);
}
const { Extractor, ExtractorConfig, ExtractorLogLevel } = createRequire(join(toolDir, "package.json"))(tool);

/** Each entry of package.json "exports": its report's name and its declaration file. */
function entries() {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  return Object.entries(pkg.exports).map(([subpath, target]) => ({
    subpath: subpath === "." ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
    report: subpath === "." ? pkg.name : `${pkg.name}-${subpath.slice(2)}`,
    types: join(root, target.types),
  }));
}

const tempFolder = join(root, "build/api-report");
mkdirSync(tempFolder, { recursive: true });
mkdirSync(join(root, "api"), { recursive: true });

const QUIET = new Set([
  "console-api-report-not-copied",
  "console-api-report-copied",
  "console-api-report-created",
  "console-compiler-version-notice",
  "console-preamble",
]);
const changed = [];
let failed = false;
for (const entry of entries()) {
  if (!existsSync(entry.types)) {
    console.error(`${entry.types} is missing: run \`make js\` first`);
    process.exit(2);
  }
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: entry.types,
      bundledPackages: [],
      compiler: {
        overrideTsconfig: {
          compilerOptions: {
            target: "ES2022",
            module: "NodeNext",
            moduleResolution: "NodeNext",
            lib: ["ES2023", "DOM", "DOM.Iterable", "ESNext.Disposable"],
            types: [],
            strict: true,
            skipLibCheck: true,
          },
          files: [entry.types],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: entry.report,
        reportFolder: join(root, "api"),
        reportTempFolder: tempFolder,
        includeForgottenExports: false,
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: "error" } },
        extractorMessageReporting: {
          default: { logLevel: "warning", addToApiReportFile: true },
          // Release tags (@public, @beta) are not used: the entry's export list is the contract.
          "ae-missing-release-tag": { logLevel: "none", addToApiReportFile: false },
          // Doc comments may link to internal names (TypeDoc shows them); the report is about the surface.
          "ae-unresolved-link": { logLevel: "none", addToApiReportFile: false },
          "ae-undocumented": { logLevel: "none", addToApiReportFile: false },
        },
        tsdocMessageReporting: { default: { logLevel: "none", addToApiReportFile: false } },
      },
    },
    configObjectFullPath: join(root, "api", `${entry.report}.api-extractor.json`),
    packageJsonFullPath: join(root, "package.json"),
  });
  const result = Extractor.invoke(config, {
    localBuild: update,
    showVerboseMessages: false,
    messageCallback: (message) => {
      // The report's own "API signature changed" warning is replaced by the message below; the compiler notice is noise.
      if (QUIET.has(message.messageId)) {
        message.logLevel = ExtractorLogLevel.None;
        message.handled = true;
      }
    },
  });
  if (result.errorCount > 0 && !result.apiReportChanged) failed = true;
  if (result.apiReportChanged) changed.push(entry);
  const state = result.apiReportChanged ? (update ? "updated" : "CHANGED") : "ok";
  console.log(`  ${entry.subpath.padEnd(22)} ${state}  api/${entry.report}.api.md`);
}

if (changed.length > 0 && !update) {
  for (const entry of changed) {
    const committed = join(root, "api", `${entry.report}.api.md`);
    const fresh = join(tempFolder, `${entry.report}.api.md`);
    const diff = spawnSync(
      "diff",
      ["-u", "--label", `api/${entry.report}.api.md (committed)`, "--label", "js/dist (now)", committed, fresh],
      {
        encoding: "utf8",
      },
    );
    console.log(diff.stdout || `(no committed report: ${committed})`);
  }
  console.error(
    `The public API changed: ${changed.map((e) => `'${e.subpath}'`).join(", ")} no longer match api/*.api.md.\n` +
      `If the change is intended, run \`${UPDATE_COMMAND}\` and commit api/ (say in the commit which names were added or removed); ` +
      "otherwise keep the name out of the entry's export list.",
  );
  process.exit(1);
}
process.exit(failed ? 1 : 0);
