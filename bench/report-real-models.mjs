// The real-model rows of the bench report (bench/real-models.mjs measures them): own device vs shared device.
import { cell, num, table } from "./markdown.mjs";

/** The report's section (bench/results.md, docs/benchmarks.md); empty when the run had no real-model rows. */
export function realModelsSection(out) {
  if (!out.realModels) return "";
  const rows = out.realModels.map((r) => [
    r.label,
    cell(r.own.median, r.own.min),
    cell(r.shared.median, r.shared.min),
    num(r.ratio),
    String(r.own.runs),
  ]);
  return (
    "## Real models: own device vs shared device\n\n" +
    "ms per inference end to end, median (min); own: the framework's own GPUDevice, input from the CPU, output " +
    "read back; shared: webdlpack's device, input and output handed over zero-copy, output read with readTensor " +
    "(docs/real-models.md). own ÷ shared near 1: the shared device costs nothing.\n\n" +
    table(["model", "own device", "shared device", "own ÷ shared", "runs"], rows)
  );
}
