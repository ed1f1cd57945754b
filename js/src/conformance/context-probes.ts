/**
 * What the context and pointer checks share: the owner and usage flags they
 * allocate with, the synchronous allocation every check uses (failing the
 * check when it is not synchronous), and a second device for device-id checks.
 */
import type { WebDLPackContext } from "../context/types.js";
import { CheckFailure, CheckSkipped, ensure, show } from "./probe.js";

export const OWNER = "webdlpack-conformance";
export const STORAGE = 0x80;
export const COPY_SRC = 0x4;
export const COPY_DST = 0x8;

/** Is `v` a thenable? */
export function isThenable(v: unknown): boolean {
  return (
    v !== null &&
    (typeof v === "object" || typeof v === "function") &&
    typeof (v as { then?: unknown }).then === "function"
  );
}

/** A number the rule P3 allows as a pointer. */
export function isU32Pointer(p: unknown): p is number {
  return typeof p === "number" && Number.isInteger(p) && p >= 1 && p < 2 ** 32;
}

/** Allocate with the synchronous API, failing the check (not throwing oddly) when it is not synchronous. */
export function alloc(ctx: WebDLPackContext, nbytes: number, options: Record<string, unknown> = {}): number {
  const p: unknown = ctx.allocWebGPU(nbytes, { owner: OWNER, ...options });
  if (isThenable(p)) {
    (p as Promise<number>).then(
      (q) => ctx.freeWebGPU(q),
      () => undefined,
    );
    throw new CheckFailure("allocWebGPU returned a Promise, not a pointer (rule P1)");
  }
  ensure(isU32Pointer(p), `allocWebGPU must return a u32 pointer in [1, 2^32), got ${show(p)}`);
  return p;
}

/** A second device from the adapter, registered with the context; removed by the returned function. */
export async function extraDevice(ctx: WebDLPackContext, gpu: GPU): Promise<{ device: GPUDevice; id: number }> {
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new CheckSkipped("no adapter for a second device");
  const device = await adapter.requestDevice();
  return { device, id: ctx.registerWebGPUDevice(device) };
}
