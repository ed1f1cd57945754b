// The Markdown report of one `make bench` run (bench/results.json → bench/results.md) and docs/benchmarks.md's
// generated section, put together from the sections' modules (report-*.mjs, exchange-report.mjs).
// Every ratio compares two numbers measured in the same run.
import { exchangeSection } from "./exchange-report.mjs";
import { gpuSection } from "./report-gpu.mjs";
import { allocSection, memoryCostSection, translationSection } from "./report-memory.mjs";
import { targetsSection } from "./report-targets.mjs";
import { realModelsSection } from "./report-real-models.mjs";

export { ortShares } from "./report-gpu.mjs";
export { targets } from "./report-targets.mjs";

/** One line naming what the numbers were measured on. */
function machineLine(out) {
  return (
    `${out.browser}, WebGPU adapter ${out.adapter}, Pyodide ${out.pyodide} (Python ${out.python}), ` +
    `${out.machine.cpus} cores (${out.machine.cpu}), ${out.machine.memGiB} GiB, ${out.machine.platform}; ${out.date.slice(0, 10)}. ` +
    `Made by \`make bench\` in ${out.totalSeconds.toFixed(0)} s`
  );
}

/** The report's sections after the targets, in order (a section with nothing to show is left out). */
function sections(out) {
  return [
    exchangeSection(out),
    gpuSection(out),
    realModelsSection(out),
    allocSection(out),
    memoryCostSection(out),
    translationSection(out),
  ].filter(Boolean);
}

/** The whole report as Markdown. */
export function markdownReport(out) {
  let md = `# webdlpack benchmarks\n\n${machineLine(out)}; plots: cpu-exchange.png, gpu-handoff.png, allocator.png.\n\n`;
  md += "## Targets\n\n" + targetsSection(out);
  md += "\n" + sections(out).join("\n");
  return md;
}

/** Markers around docs/benchmarks.md's generated section, which `make bench` rewrites. */
export const README_MARKERS = ["<!-- bench:begin (written by make bench) -->", "<!-- bench:end -->"];

/** docs/benchmarks.md's generated section: the same numbers as results.md, one heading level down. */
export function readmeSection(out) {
  const demote = (md) => md.replace(/^## /gm, "#### ");
  return (
    `${machineLine(out)}. Median (min) of repeated samples; every ratio is against a baseline measured in the same run. ` +
    "Full tables: [`bench/results.md`](../bench/results.md); raw numbers: `bench/results.json`.\n\n" +
    targetsSection(out) +
    "\n" +
    sections(out).map(demote).join("\n") +
    "\n![CPU exchange](../bench/cpu-exchange.png)\n\n![GPU hand-off](../bench/gpu-handoff.png)\n\n![allocator](../bench/allocator.png)\n"
  );
}

/** `readme` with the text between {@link README_MARKERS} replaced by `section`; throws if the markers are missing. */
export function replaceReadmeSection(readme, section) {
  const [begin, end] = README_MARKERS;
  const i = readme.indexOf(begin),
    j = readme.indexOf(end);
  if (i < 0 || j < i) throw new Error(`README.md has no benchmark markers (${begin} … ${end})`);
  return `${readme.slice(0, i + begin.length)}\n${section}${readme.slice(j)}`;
}
