/**
 * Tensor.fromTypedArray in Chromium, where ArrayBuffer.prototype.detached and
 * Float16Array exist (Node 20 has neither): a transferred buffer is a typed
 * error, and float16 is accepted from a Float16Array or a Uint16Array (raw bits)
 * while other element types need `{reinterpret: true}`. Plain JS page, no GPU work.
 */
import { test, expect } from "./fixtures.js";

type Webdlpack = typeof import("../../js/src/index.js");

test("a transferred ArrayBuffer is INVALID_ARGUMENT naming `array`; float16 comes from Float16Array or Uint16Array only", async ({
  jsPage,
}) => {
  const r = await jsPage.evaluate(() => {
    const w = (window as unknown as { webdlpack: Webdlpack }).webdlpack;
    const failure = (fn: () => unknown): string => {
      try {
        fn();
        return "ok";
      } catch (e) {
        const err = e as { code?: string; field?: string; expected?: string; name?: string };
        return `${err.name} ${err.code} ${err.field} ${err.expected}`;
      }
    };
    const f32 = new Float32Array(4);
    const moved = (f32.buffer as ArrayBuffer & { transfer(): ArrayBuffer }).transfer(); // detaches f32's buffer
    const F16 = (globalThis as unknown as { Float16Array?: new (n: number) => ArrayBufferView }).Float16Array;
    return {
      hasDetached: "detached" in ArrayBuffer.prototype,
      detachedArray: failure(() => w.Tensor.fromTypedArray(f32)),
      detachedBuffer: failure(() => w.Tensor.fromTypedArray(f32.buffer as ArrayBuffer, { dtype: "float32" })),
      movedOk: w.Tensor.fromTypedArray(moved, { dtype: "float32" }).size,
      hasFloat16: F16 !== undefined,
      f16:
        F16 === undefined
          ? "no Float16Array"
          : failure(() => w.Tensor.fromTypedArray(new F16(2), { dtype: "float16" })),
      f16AsUint16:
        F16 === undefined ? "no Float16Array" : failure(() => w.Tensor.fromTypedArray(new F16(2), { dtype: "uint16" })),
      u16AsF16: failure(() => w.Tensor.fromTypedArray(new Uint16Array(2), { dtype: "float16" })),
      i16AsF16: failure(() => w.Tensor.fromTypedArray(new Int16Array(2), { dtype: "float16" })),
      i16AsF16Opt: failure(() => w.Tensor.fromTypedArray(new Int16Array(2), { dtype: "float16", reinterpret: true })),
    };
  });
  const detached = "WebDLPackError INVALID_ARGUMENT array a TypedArray whose ArrayBuffer is not detached/transferred";
  expect(r.hasDetached).toBe(true);
  expect(r.detachedArray).toBe(detached);
  expect(r.detachedBuffer).toBe(detached);
  expect(r.movedOk).toBe(4);
  expect(r.hasFloat16).toBe(true);
  expect(r.f16).toBe("ok");
  expect(r.f16AsUint16).toMatch(/^WebDLPackError BAD_DTYPE dtype float16 .*reinterpret: true/);
  expect(r.u16AsF16).toBe("ok");
  expect(r.i16AsF16).toMatch(/^WebDLPackError BAD_DTYPE dtype int16 .*reinterpret: true/);
  expect(r.i16AsF16Opt).toBe("ok");
});
