/**
 * The page-wide context is one object shared by every copy of webdlpack on the
 * page; a copy with another protocol major refuses it (INCOMPATIBLE_CONTEXT).
 */
import { test, expect } from "./fixtures.js";
import type * as WDL from "../../js/src/index.js";

type Lib = typeof WDL;

test("two real copies of the library share one context and one pointer table", async ({ jsPage }) => {
  const result = await jsPage.evaluate(async () => {
    // new Function keeps import() a real browser dynamic import (not rewritten by the test compiler).
    const load = new Function("u", "return import(u)") as (url: string) => Promise<Lib>;
    const a = await load("/js/dist/webdlpack.bundle.js?copy=1");
    const b = await load("/js/dist/webdlpack.bundle.js?copy=2");
    const harness = (window as unknown as { webdlpack: Lib }).webdlpack;
    const ca = a.getContext();
    const cb = b.getContext();
    await ca.setup();
    const device = cb.getWebGPUDevice(0);
    const ptr = await cb.allocWebGPUChecked(64, { owner: "copy 2" });
    const sameBuffer = ca.gpuPointerToBuffer(ptr) === harness.getContext().gpuPointerToBuffer(ptr);
    ca.freeWebGPU(ptr);
    let staleViaCopy2 = "no error";
    try {
      cb.gpuPointerToBuffer(ptr);
    } catch (e) {
      staleViaCopy2 = (e as { code?: string }).code ?? String(e);
    }
    const record = (globalThis as unknown as Record<symbol, { protocol: { major: number; minor: number } }>)[
      Symbol.for("webdlpack.context")
    ];
    return {
      distinctModules: a.getContext !== b.getContext && a.WebDLPackError !== b.WebDLPackError,
      sameContext: ca === cb && cb === harness.getContext(),
      sameDevice: device === ca.getWebGPUDevice(0),
      sameBuffer,
      staleViaCopy2,
      protocol: record?.protocol,
      copyProtocol: b.CONTEXT_PROTOCOL,
    };
  });
  expect(result.distinctModules).toBe(true);
  expect(result.sameContext).toBe(true);
  expect(result.sameDevice).toBe(true);
  expect(result.sameBuffer).toBe(true);
  expect(result.staleViaCopy2).toBe("STALE_POINTER");
  expect(result.protocol).toEqual({ major: 1, minor: 3 });
  expect(result.copyProtocol).toEqual({ major: 1, minor: 3 });
});

test("a copy with another protocol major refuses with INCOMPATIBLE_CONTEXT naming both versions", async ({
  jsPage,
}) => {
  const result = await jsPage.evaluate(async () => {
    const load = new Function("u", "return import(u)") as (url: string) => Promise<Lib>;
    const harness = (window as unknown as { webdlpack: Lib }).webdlpack;
    const ctx = harness.getContext();
    // A real second copy whose protocol major is 2: the bundle's text with the constant changed.
    const source = await (await fetch("/js/dist/webdlpack.bundle.js")).text();
    const pattern = /CONTEXT_PROTOCOL = Object\.freeze\(\{ major: 1, minor: 3 \}\)/g;
    const matches = source.match(pattern)?.length ?? 0;
    const patched = source.replace(pattern, "CONTEXT_PROTOCOL = Object.freeze({ major: 2, minor: 0 })");
    const url = URL.createObjectURL(new Blob([patched], { type: "text/javascript" }));
    const v2 = await load(url);
    let refusal: { code?: string; message?: string; value?: unknown; expected?: string } = {};
    try {
      v2.getContext();
    } catch (e) {
      refusal = e as typeof refusal;
    }
    // A faked page record of major 99 (as if a future copy came first) is refused by this copy too.
    const key = Symbol.for("webdlpack.context");
    const slot = globalThis as unknown as Record<symbol, unknown>;
    const saved = slot[key];
    slot[key] = { protocol: { major: 99, minor: 4 }, context: {} };
    let fakedCode = "no error";
    let fakedMessage = "";
    try {
      harness.getContext();
    } catch (e) {
      fakedCode = (e as { code?: string }).code ?? String(e);
      fakedMessage = String((e as Error).message);
    }
    slot[key] = saved;
    return {
      matches,
      v2Protocol: v2.CONTEXT_PROTOCOL,
      code: refusal.code,
      message: refusal.message,
      value: refusal.value,
      expected: refusal.expected,
      fakedCode,
      fakedMessage,
      stillSame: harness.getContext() === ctx,
    };
  });
  expect(result.matches).toBe(1);
  expect(result.v2Protocol).toEqual({ major: 2, minor: 0 });
  expect(result.code).toBe("INCOMPATIBLE_CONTEXT");
  expect(result.message).toContain("protocol 2.0");
  expect(result.message).toContain("protocol 1.3");
  expect(result.value).toBe(1);
  expect(result.expected).toBe("2");
  expect(result.fakedCode).toBe("INCOMPATIBLE_CONTEXT");
  expect(result.fakedMessage).toContain("protocol 99.4");
  expect(result.fakedMessage).toContain("protocol 1.3");
  expect(result.stillSame).toBe(true);
});
