/**
 * What the Python-only example specs share (not a spec itself): open a PyScript page whose only code is Python
 * and wait for the line its example prints last, collecting console errors and requests that left 127.0.0.1.
 */
import type { Page } from "@playwright/test";
import { THIRD_PARTY_WARNINGS } from "./fixtures.js";

/** Open `path`, wait (up to `timeoutMs`) for the line `done` matches; returns it, the console errors and any request off 127.0.0.1. */
export async function runExample(
  page: Page,
  path: string,
  done: RegExp,
  timeoutMs = 100_000,
): Promise<{ line: string; errors: string[]; offsite: string[] }> {
  const errors: string[] = [];
  const offsite: string[] = [];
  let resolveLine: (line: string) => void;
  const line = new Promise<string>((resolve) => (resolveLine = resolve));
  page.context().on("request", (req) => {
    const url = new URL(req.url());
    if (!["data:", "blob:"].includes(url.protocol) && url.hostname !== "127.0.0.1") offsite.push(req.url());
  });
  page.context().on("response", (res) => {
    if (res.status() >= 400 && !res.url().endsWith("/favicon.ico")) errors.push(`${res.status()} ${res.url()}`);
  });
  page.on("pageerror", (err) => {
    errors.push(`page error: ${err.message}`);
    resolveLine(`failed: ${err.message}`);
  });
  page.on("console", (msg) => {
    if (done.test(msg.text())) resolveLine(msg.text());
    else if (
      msg.type() === "error" &&
      !msg.text().startsWith("Failed to load resource") &&
      !THIRD_PARTY_WARNINGS.test(msg.text()) // a warning, not a Python error (ORT 1.23 logs one on some CPUs)
    ) {
      errors.push(msg.text());
      resolveLine(`failed: ${msg.text()}`); // a Python error ends the run (PyScript logs its traceback)
    }
  });
  await page.goto(path);
  const found = await Promise.race([
    line,
    page.waitForTimeout(timeoutMs).then(() => `timed out; console errors: ${errors.join(" | ")}`),
  ]);
  return { line: found, errors, offsite };
}
