/**
 * CPU tensors between threads (js/src/bridge/threads.ts), each path, over a MessageChannel (the structured
 * clone and transfer rules of postMessage; real Workers in tests/browser/worker.spec.ts): transfer, copy
 * (a wasm heap), shared (a shared wasm memory); the sender's release runs exactly once, on the sender.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { WebDLPackError } from "../../js/src/errors.js";
import { Tensor } from "../../js/src/tensor/index.js";
import {
  packTensorForThread,
  pendingThreadReleases,
  tensorFromThread,
  type PackedThreadTensor,
} from "../../js/src/bridge/threads.js";
import { createTestHost } from "../../js/src/testing/index.js";
import { DeviceType, DataTypeCode } from "../../js/src/dlpack/index.js";
import { produce } from "./helpers.js";

/** Post `packed` over a MessageChannel as a thread would and take the tensor out on the other side. */
async function crossOver(packed: PackedThreadTensor): Promise<Tensor> {
  const { port1, port2 } = new MessageChannel();
  const received = new Promise<unknown>((resolve) => {
    port2.onmessage = (e) => resolve(e.data);
  });
  port1.postMessage({ tensor: packed.message }, packed.transfer);
  const data = (await received) as { tensor: unknown };
  port1.close();
  port2.close();
  return tensorFromThread(data.tensor);
}

/** Let the release message arrive (ports deliver in a later task). */
const settle = async (check: () => boolean): Promise<boolean> => {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 2));
  return check();
};

/** The code of the error `fn` throws. */
function codeOf(fn: () => unknown): string {
  try {
    fn();
    return "no error";
  } catch (err) {
    return err instanceof WebDLPackError ? err.code : String(err);
  }
}

test("transfer: a tensor over its own ArrayBuffer moves without a copy; the sender's release runs once, after the receiver's", async () => {
  let released = 0;
  const array = Float32Array.from({ length: 12 }, (_, i) => i * 0.5);
  const sender = Tensor.fromTypedArray(array, {
    shape: [3, 4],
    onRelease: () => {
      released += 1;
    },
  });
  const packed = packTensorForThread(sender);
  assert.equal(packed.path, "transfer");
  assert.equal(packed.bytesCopied, 0);
  assert.match(packed.reason, /whole ArrayBuffer/);
  assert.equal(array.byteLength, 0, "the sender's buffer is detached at once");
  assert.equal(
    codeOf(() => sender.shape),
    "DISPOSED",
  );
  assert.equal(released, 0, "the receiver still holds the bytes");
  assert.equal(pendingThreadReleases(), 1);
  const received = await crossOver(packed);
  assert.deepEqual([...received.shape], [3, 4]);
  assert.equal(received.storage, "js");
  assert.equal(received.flags.isCopied, false);
  assert.deepEqual(
    Array.from(received.view as Float32Array),
    Array.from({ length: 12 }, (_, i) => i * 0.5),
  );
  received.dispose();
  received.dispose();
  assert.ok(await settle(() => released === 1));
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(released, 1, "exactly once");
  assert.equal(pendingThreadReleases(), 0);
});

test("copy: a tensor in a wasm heap takes one copy; the producer's deleter runs once, at the send", async () => {
  const host = createTestHost();
  const made = produce(
    host,
    {
      device: { deviceType: DeviceType.kDLCPU, deviceId: 0 },
      dtype: { code: DataTypeCode.kDLInt, bits: 32, lanes: 1 },
      shape: [2, 3],
    },
    24,
    { fill: (i) => (i % 4 === 0 ? i / 4 + 1 : 0) },
  );
  const sender = Tensor.fromManaged(host, made.address);
  const packed = packTensorForThread(sender);
  assert.equal(packed.path, "copy");
  assert.equal(packed.bytesCopied, 24);
  assert.match(packed.reason, /wasm heap/);
  assert.equal(made.calls(), 1, "the receiver has its own bytes: the deleter ran at once");
  assert.equal(host.liveAllocations, 0);
  assert.equal(pendingThreadReleases(), 0);
  const received = await crossOver(packed);
  assert.deepEqual(Array.from(received.view as Int32Array), [1, 2, 3, 4, 5, 6]);
  assert.equal(received.flags.isCopied, true);
  received.dispose();
  assert.equal(made.calls(), 1);
});

test("copy: part of a buffer, a strided tensor, or copy: true; the sender's buffer stays attached", async () => {
  const big = Float64Array.from([0, 1, 2, 3, 4, 5, 6, 7]);
  const part = packTensorForThread(Tensor.fromTypedArray(big.subarray(2, 5)));
  assert.equal(part.path, "copy");
  assert.match(part.reason, /covers 24 of its ArrayBuffer's 64 bytes/);
  assert.equal(big.byteLength, 64);
  assert.deepEqual(Array.from((await crossOver(part)).view as Float64Array), [2, 3, 4]);

  const host = createTestHost();
  const address = host.malloc(24);
  new Int32Array(host.buffer, address, 6).set([1, 2, 3, 4, 5, 6]);
  const strided = Tensor.wasmView(host, { data: address, dtype: "int32", shape: [2, 3], strides: [1, 2] });
  const packed = packTensorForThread(strided);
  assert.equal(packed.path, "copy");
  assert.match(packed.reason, /strided/);
  const received = await crossOver(packed);
  assert.deepEqual([...received.shape], [2, 3]);
  assert.deepEqual(Array.from(received.view as Int32Array), [1, 3, 5, 2, 4, 6]);

  const own = new Uint8Array([9, 8, 7]);
  const asked = packTensorForThread(Tensor.fromTypedArray(own), { copy: true });
  assert.equal(asked.path, "copy");
  assert.equal(own.byteLength, 3);
});

test("shared: a tensor in a shared wasm memory crosses with no copy; writes are seen both ways; release after the receiver's", async () => {
  const host = createTestHost(1, 4, { shared: true });
  assert.ok(host.buffer instanceof SharedArrayBuffer);
  const made = produce(
    host,
    {
      device: { deviceType: DeviceType.kDLCPU, deviceId: 0 },
      dtype: { code: DataTypeCode.kDLFloat, bits: 32, lanes: 1 },
      shape: [4],
    },
    16,
    { fill: () => 0 },
  );
  new Float32Array(host.buffer, made.data, 4).set([1, 2, 3, 4]);
  const packed = packTensorForThread(Tensor.fromManaged(host, made.address));
  assert.equal(packed.path, "shared");
  assert.equal(packed.bytesCopied, 0);
  assert.equal(packed.transfer.length, 1, "only the release port is transferred; the memory is shared");
  const received = await crossOver(packed);
  (received.view as Float32Array)[0] = 99;
  assert.equal(new Float32Array(host.buffer, made.data, 4)[0], 99, "the same memory");
  assert.equal(made.calls(), 0, "the receiver still views the producer's bytes");
  received.dispose();
  assert.ok(await settle(() => made.calls() === 1));
  assert.equal(pendingThreadReleases(), 0);
});

test("refusals: a WebGPU tensor stays usable; a malformed message is INVALID_ARGUMENT and still frees the sender's hold", async () => {
  const gpu = Tensor.webgpu({ pointer: 0x10040000, deviceId: 0, dtype: "float32", shape: [4] });
  assert.throws(
    () => packTensorForThread(gpu),
    (err: unknown) =>
      err instanceof WebDLPackError &&
      err.code === "UNSUPPORTED" &&
      /WebGPU objects can not cross threads/.test(err.message),
  );
  assert.deepEqual([...gpu.shape], [4]);
  assert.equal(
    codeOf(() => packTensorForThread({} as Tensor)),
    "INVALID_ARGUMENT",
  );
  assert.equal(
    codeOf(() => tensorFromThread({ hello: 1 })),
    "INVALID_ARGUMENT",
  );
  assert.equal(
    codeOf(() => tensorFromThread(null)),
    "INVALID_ARGUMENT",
  );

  let released = 0;
  const packed = packTensorForThread(
    Tensor.fromTypedArray(new Int16Array(4), {
      onRelease: () => {
        released += 1;
      },
    }),
  );
  const bad = { ...packed.message, nbytes: 1 << 20 };
  assert.equal(
    codeOf(() => tensorFromThread(bad)),
    "INVALID_ARGUMENT",
  );
  assert.ok(await settle(() => released === 1));
  const wrongShape = packTensorForThread(
    Tensor.fromTypedArray(new Int16Array(4), {
      onRelease: () => {
        released += 1;
      },
    }),
  );
  assert.equal(
    codeOf(() => tensorFromThread({ ...wrongShape.message, shape: [5] })),
    "BAD_SHAPE",
  );
  assert.ok(await settle(() => released === 2));
  const wrongDType = packTensorForThread(
    Tensor.fromTypedArray(new Int16Array(4), {
      onRelease: () => {
        released += 1;
      },
    }),
  );
  assert.equal(
    codeOf(() => tensorFromThread({ ...wrongDType.message, dtype: "float99" })),
    "BAD_DTYPE",
  );
  assert.ok(await settle(() => released === 3));
  assert.equal(pendingThreadReleases(), 0);
});
