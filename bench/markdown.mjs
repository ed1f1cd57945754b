// Markdown pieces the bench reports share (report.mjs and its sections, exchange-report.mjs): number formats and tables.

/** A number with 0-3 decimals, fewer the larger it is. */
export const num = (x) => (x >= 1000 ? x.toFixed(0) : x >= 100 ? x.toFixed(1) : x >= 1 ? x.toFixed(2) : x.toFixed(3));
/** "median (min)". */
export const cell = (median, min) => `${num(median)} (${num(min)})`;
/** A ratio as "12.3×". */
export const ratio = (x) => `${num(x)}×`;
/** A Markdown table: the first column left-aligned, the others right-aligned. */
export const table = (head, rows) =>
  `| ${head.join(" | ")} |\n|${head.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|\n` +
  rows.map((r) => `| ${r.join(" | ")} |`).join("\n") +
  "\n";
