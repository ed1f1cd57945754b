/**
 * `Tensor.webgpu` ownership (`onRelease` exactly once across dispose, exports and retains),
 * its flags, and `Tensor.fromTypedArray({isCopied})`. Plain JS page, no GPU work.
 */
import { test, expect } from "./fixtures.js";

type Webdlpack = typeof import("../../js/src/index.js");
type WebdlpackTesting = typeof import("../../js/src/testing/index.js");

test("Tensor.webgpu onRelease runs exactly once, after dispose, every toManaged export and every retain", async ({
  jsPage,
}) => {
  const r = await jsPage.evaluate(async () => {
    const { webdlpack: w, webdlpackTesting } = window as unknown as {
      webdlpack: Webdlpack;
      webdlpackTesting: WebdlpackTesting;
    };
    // The struct's deleter is called as a consumer would, with the codec's internal helper (by its module path).
    const { callManagedDeleter } = (await import(
      "/js/dist/dlpack/read.js" as string
    )) as typeof import("../../js/src/dlpack/read.js");
    const host = webdlpackTesting.createTestHost(1, 4);
    let released = 0;
    const t = w.Tensor.webgpu({
      pointer: 0x10001,
      deviceId: 0,
      dtype: "float32",
      shape: [4],
      readOnly: true,
      isCopied: true,
      onRelease: () => {
        released++;
      },
    });
    const flags = { ...t.flags };
    const address = t.toManaged(host);
    const releaseHold = t.retain();
    const steps: number[] = [];
    t.dispose();
    steps.push(released);
    callManagedDeleter(host, address);
    steps.push(released);
    releaseHold();
    steps.push(released);
    releaseHold(); // idempotent
    t.dispose();
    steps.push(released);
    // A tensor without onRelease owns nothing: retain gives a no-op release.
    const plain = w.Tensor.webgpu({ pointer: 0x10002, deviceId: 0, dtype: "uint8", shape: [2] });
    const noop = plain.retain();
    noop();
    plain.dispose();
    return { flags, steps };
  });
  expect(r.flags).toEqual({ readOnly: true, isCopied: true, subbytePadded: false });
  expect(r.steps).toEqual([0, 0, 1, 1]);
});

test("Tensor.webgpu with a bad description runs onRelease once and throws a typed error; fromTypedArray sets IS_COPIED", async ({
  jsPage,
}) => {
  const r = await jsPage.evaluate(() => {
    const w = (window as unknown as { webdlpack: Webdlpack }).webdlpack;
    const out: Array<{ code: string; field: string | undefined; released: number }> = [];
    for (const bad of [{ pointer: 0 }, { shape: [-1] }, { dtype: "nope" }]) {
      let released = 0;
      try {
        w.Tensor.webgpu({
          pointer: 0x20001,
          deviceId: 0,
          dtype: "float32",
          shape: [1],
          ...bad,
          onRelease: () => {
            released++;
          },
        });
      } catch (e) {
        const err = e as { code: string; field?: string };
        out.push({ code: err.code, field: err.field, released });
      }
    }
    let typeError = "";
    try {
      w.Tensor.webgpu({ pointer: 1, deviceId: 0, dtype: "float32", shape: [1], onRelease: 5 as never });
    } catch (e) {
      typeError = `${(e as { code: string }).code} ${(e as { field: string }).field}`;
    }
    const copied = w.Tensor.fromTypedArray(new Int8Array(3), { isCopied: true });
    const plain = w.Tensor.fromTypedArray(new Int8Array(3));
    return { out, typeError, copied: copied.flags.isCopied, plain: plain.flags.isCopied };
  });
  expect(r.out).toHaveLength(3);
  expect(r.out[0]).toEqual({ code: "NULL_POINTER", field: "pointer", released: 1 });
  expect(r.out[1]!.released).toBe(1);
  expect(r.out[1]!.code).toBe("BAD_SHAPE");
  expect(r.out[2]!.released).toBe(1);
  expect(r.out[2]!.code).toBe("BAD_DTYPE");
  expect(r.typeError).toBe("INVALID_ARGUMENT onRelease");
  expect(r.copied).toBe(true);
  expect(r.plain).toBe(false);
});
