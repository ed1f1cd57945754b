// The plot of a GPU transfer run (plot.py → <json>.png), where the project's Python has matplotlib (`make bench-gpu`
// installs it: the bench extra); else one line saying why there is none — the JSON and Markdown are the results.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const PYTHON = ".venv/bin/python";

/** Plot the run written to `jsonPath`; returns whether a plot was made. */
export function plotRun(jsonPath) {
  if (!existsSync(PYTHON)) {
    console.log(`no plot: ${PYTHON} is missing (make setup makes it)`);
    return false;
  }
  if (spawnSync(PYTHON, ["-c", "import matplotlib"], { stdio: "ignore" }).status !== 0) {
    console.log(`no plot: ${PYTHON} has no matplotlib (make bench-gpu installs the bench extra)`);
    return false;
  }
  execFileSync(PYTHON, ["bench/gpu/plot.py", jsonPath], { stdio: "inherit" });
  return true;
}
