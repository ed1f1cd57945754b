// One GPU transfer benchmark run, the same in Node (node.mjs) and in Chromium (transfers.html):
// the raw anchors (primitives.js) and webdlpack's paths (rows.js) at each size, in that order per size,
// so every ratio compares numbers from the same run. Returns the rows with their raw samples.
import { chunkVariants, copyAnchor, emptySubmitRow, readbackAnchors, uploadAnchors } from "./primitives.js";
import { MiB } from "./measure.js";
import { webdlpackRows } from "./rows.js";

/**
 * @param {{device: GPUDevice, webdlpack?: object, sizes: number[], rows: string[], log?: (s: string) => void}} opts
 *   rows: "primitives" and/or "webdlpack"; webdlpack: the package (needs getContext().setup({device}) done).
 */
export async function runTransferBench({ device, webdlpack, sizes, rows, log = () => {} }) {
  const out = [];
  const t0 = performance.now();
  const say = (what) => log(`  ${((performance.now() - t0) / 1000).toFixed(1)} s  ${what}`);
  out.push(await emptySubmitRow(device));
  say("empty submit");
  for (const n of sizes) {
    if (rows.includes("primitives")) {
      out.push(...(await readbackAnchors(device, n)));
      out.push(...(await uploadAnchors(device, n)));
      out.push(await copyAnchor(device, n));
      for (const chunk of [MiB, 4 * MiB]) out.push(...(await chunkVariants(device, n, chunk)));
      say(`anchors at ${n} B`);
    }
    if (rows.includes("webdlpack") && webdlpack) {
      out.push(...(await webdlpackRows(webdlpack, device, n)));
      say(`webdlpack at ${n} B`);
    }
  }
  out.push(await emptySubmitRow(device));
  say("empty submit again");
  return out;
}
