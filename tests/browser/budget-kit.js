// In-page helpers of tests/browser/budget-frameworks.spec.ts: a framework pushed past the page's GPU memory
// budget, watched for what WebGPU reports, and what webdlpack's own allocations do meanwhile.

/**
 * Give back what the page caches (`ctx.trimMemory()`), then set a budget `headroom` bytes above what device 0
 * holds: from here every new buffer of size > headroom crosses it. Returns the budget.
 */
export async function budgetAboveHeld(ctx, headroom) {
  await ctx.trimMemory();
  const budget = ctx.memory().totalBytes + headroom;
  ctx.setMemoryBudget(budget);
  return budget;
}

/**
 * Collect what the raw device reports outside any error scope (`uncapturederror`: validation, out-of-memory)
 * and every exception the page does not catch. `stop()` removes the listeners and returns the messages.
 */
export function watchErrors(device) {
  const seen = [];
  const onDevice = (event) => seen.push(`uncaptured ${event.error?.constructor?.name}: ${event.error?.message}`);
  const onPage = (event) => seen.push(`page: ${event.reason?.message ?? event.message ?? event.reason}`);
  device.addEventListener("uncapturederror", onDevice);
  window.addEventListener("unhandledrejection", onPage);
  window.addEventListener("error", onPage);
  return {
    stop() {
      device.removeEventListener("uncapturederror", onDevice);
      window.removeEventListener("unhandledrejection", onPage);
      window.removeEventListener("error", onPage);
      return seen;
    },
  };
}

/**
 * Device 0 while a framework is past the budget: its figures, and how webdlpack's own checked allocation of
 * 4 KiB fails (its code and field), which it must while the page is over the budget.
 */
export async function pastBudgetState(ctx) {
  const m = ctx.memory();
  let refused = { code: "no error", field: "" };
  try {
    ctx.freeWebGPU(await ctx.allocWebGPUChecked(4096));
  } catch (err) {
    refused = { code: err?.code ?? String(err), field: err?.field ?? "" };
  }
  return {
    budget: m.budget,
    totalBytes: m.totalBytes,
    overruns: m.budgetOverruns,
    outOfMemoryErrors: m.outOfMemoryErrors,
    refused,
  };
}

/** Largest |a[i] - b[i]| (Infinity when the lengths differ). */
export function maxDiff(a, b) {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(Number(a[i]) - Number(b[i])));
  return m;
}
