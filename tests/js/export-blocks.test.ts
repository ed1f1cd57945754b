/**
 * tensor.toManaged's struct blocks (dlpack-export.ts): a Tensor's block encoded once and copied into
 * each export's block, and the blocks a host keeps for later exports once their deleter ran. Each
 * export must decode as a fresh one would, whatever the block held before, wherever memory has grown
 * to, and every deleter call acts at most once.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  DLPackFlag,
  LAYOUT,
  readManagedTensor,
  readManagedTensorVersioned,
  type ManagedTensorDesc,
} from "../../js/src/dlpack/index.js";
import { Tensor, liveExportCount, trimExportBlocks } from "../../js/src/tensor/index.js";
import { createTestHost, type TestHost } from "../../js/src/testing/index.js";

/** What a decode says about the tensor (not where its arrays are). */
function fields(d: ManagedTensorDesc): object {
  return {
    data: d.data,
    device: d.device,
    dtype: d.dtype,
    shape: [...d.shape],
    strides: d.strides === null ? null : [...d.strides],
    byteOffset: d.byteOffset,
    flags: d.flags,
    version: d.version,
    managerCtx: d.managerCtx,
  };
}

/** The shape and strides pointers of the versioned struct at `address`. */
function arrayPointers(host: TestHost, address: number): number[] {
  const at = address + LAYOUT.DLManagedTensorVersioned.dl_tensor;
  const view = new DataView(host.buffer);
  return [view.getUint32(at + LAYOUT.DLTensor.shape, true), view.getUint32(at + LAYOUT.DLTensor.strides, true)];
}

/** A wasm tensor over `nbytes` new bytes of `host`. */
function wasmTensor(host: TestHost, input: { dtype: string; shape: number[]; strides?: number[] }, nbytes: number) {
  return Tensor.wasmView(host, { data: host.malloc(nbytes), ...input });
}

function release(host: TestHost, address: number): void {
  host.callVoidPointer(readManagedTensorVersioned(host, address).deleter, address);
}

test("a kept block is reused by the next export and rewritten whole, even after the consumer scribbled on it", () => {
  const host = createTestHost();
  const t = wasmTensor(host, { dtype: "int16", shape: [3, 4], strides: [1, 3] }, 24);
  const first = t.toManaged(host);
  const d = readManagedTensorVersioned(host, first);
  const expected = fields(d);
  assert.deepEqual(arrayPointers(host, first), [first + 64, first + 80], "the block's own shape, then strides");
  const allocs = host.liveAllocations;
  new Uint8Array(host.buffer, first, 96).fill(0xab); // a consumer that poisons what it gives back
  host.callVoidPointer(d.deleter, first);
  assert.equal(host.liveAllocations, allocs, "kept, not freed");
  const second = t.toManaged(host);
  assert.equal(second, first, "the kept block");
  assert.equal(host.liveAllocations, allocs, "no new block");
  assert.deepEqual(fields(readManagedTensorVersioned(host, second)), expected);
  assert.deepEqual(arrayPointers(host, second), [second + 64, second + 80]);
  host.callVoidPointer(d.deleter, second);
  // Another Tensor whose block has the same size gets it, with its own fields.
  const other = wasmTensor(host, { dtype: "float32", shape: [5, 2], strides: [2, 1] }, 40);
  const third = other.toManaged(host);
  assert.equal(third, first);
  const o = readManagedTensorVersioned(host, third);
  assert.deepEqual(
    [o.data, o.dtype.code, o.dtype.bits, [...o.shape], [...o.strides!]],
    [other.data, 2, 32, [5, 2], [2, 1]],
  );
  host.callVoidPointer(d.deleter, third);
  assert.equal(trimExportBlocks(host), 1);
  host.free(t.data);
  host.free(other.data);
  assert.equal(host.liveAllocations, 0);
});

test("two live exports of one Tensor: two blocks, each released once in either order", () => {
  const host = createTestHost();
  const t = wasmTensor(host, { dtype: "uint8", shape: [16] }, 16);
  const exportsBefore = liveExportCount();
  const allocs = host.liveAllocations;
  const a = t.toManaged(host);
  const b = t.toManaged(host);
  assert.notEqual(a, b);
  assert.deepEqual(fields(readManagedTensorVersioned(host, a)), fields(readManagedTensorVersioned(host, b)));
  assert.equal(liveExportCount(), exportsBefore + 2);
  release(host, b);
  release(host, b); // a second call for a kept block does nothing
  assert.equal(liveExportCount(), exportsBefore + 1);
  assert.equal(readManagedTensorVersioned(host, a).data, t.data, "the live one is untouched");
  const c = t.toManaged(host);
  assert.equal(c, b, "b's kept block");
  release(host, a);
  release(host, c);
  assert.equal(liveExportCount(), exportsBefore);
  assert.equal(host.liveAllocations, allocs + 2, "both blocks kept");
  assert.equal(trimExportBlocks(host), 2);
  assert.equal(trimExportBlocks(host), 0);
  assert.equal(host.liveAllocations, allocs);
});

test("deleter calls with addresses that are not a live export do nothing", () => {
  const host = createTestHost();
  const t = wasmTensor(host, { dtype: "float32", shape: [2, 2] }, 16);
  const kept = t.toManaged(host);
  const deleter = readManagedTensorVersioned(host, kept).deleter;
  host.callVoidPointer(deleter, kept); // now a kept, released block
  const live = t.toManaged(host); // takes the kept block
  const spare = t.toManaged(host); // a second block ...
  host.callVoidPointer(deleter, spare); // ... kept, released
  const exportsBefore = liveExportCount();
  const allocs = host.liveAllocations;
  for (const bad of [0, 8, live + 8, live + 64, live - 16, spare, t.data, 0xfffffff0, -16]) {
    host.callVoidPointer(deleter, bad);
  }
  assert.equal(liveExportCount(), exportsBefore, "no export released");
  assert.equal(host.liveAllocations, allocs, "nothing freed");
  assert.deepEqual([...readManagedTensorVersioned(host, live).shape], [2, 2], "the live export intact");
  host.callVoidPointer(deleter, live);
  assert.equal(liveExportCount(), exportsBefore - 1);
  trimExportBlocks(host);
});

test("exports across memory growth: between exports, and inside an export's malloc", () => {
  for (const shared of [false, true]) {
    const host = createTestHost(1, 64, { shared });
    const t = wasmTensor(host, { dtype: "int32", shape: [4] }, 16);
    const check = (x: number): void => {
      const d = readManagedTensorVersioned(host, x);
      assert.deepEqual([d.data, [...d.shape], d.strides && [...d.strides]], [t.data, [4], [1]], `shared: ${shared}`);
      assert.deepEqual(arrayPointers(host, x), [x + 64, x + 72]);
    };
    const a = t.toManaged(host); // the host's view of memory is made
    const buffer = host.buffer;
    host.memory.grow(1); // detaches `buffer` unless shared
    assert.equal(buffer.byteLength === 0, !shared);
    const filler = host.malloc(host.buffer.byteLength - 4096);
    const b = t.toManaged(host); // a new block past the first memory
    assert.ok(b > 65536, `${b} lies past the first memory`);
    check(a);
    check(b);
    release(host, a);
    host.memory.grow(1);
    const c = t.toManaged(host); // a's kept block, written through a new view
    assert.equal(c, a);
    check(c);
    // Growth inside the export's own malloc, after this host's view was made.
    const growing = Object.create(host) as TestHost;
    growing.malloc = (n: number) => {
      host.memory.grow(1);
      return host.malloc(n);
    };
    const g1 = t.toManaged(growing);
    const g2 = t.toManaged(growing);
    check(g1);
    check(g2);
    for (const x of [b, c, g1, g2]) release(host, x);
    assert.equal(trimExportBlocks(host), 2);
    assert.equal(trimExportBlocks(growing), 2);
    host.free(filler);
    host.free(t.data);
    assert.equal(host.liveAllocations, 0, `shared: ${shared}`);
  }
});

test("a host keeps at most 16 blocks of at most 512 bytes; the rest are freed", () => {
  const host = createTestHost();
  const t = wasmTensor(host, { dtype: "uint8", shape: [8] }, 8);
  const allocs = host.liveAllocations;
  const exported = Array.from({ length: 20 }, () => t.toManaged(host));
  assert.equal(host.liveAllocations, allocs + 20);
  for (const a of exported) release(host, a);
  assert.equal(host.liveAllocations, allocs + 16, "16 kept, 4 freed");
  // 30 dimensions: a 544-byte block, freed when released.
  const big = wasmTensor(host, { dtype: "uint8", shape: new Array(30).fill(1) }, 1);
  const withBig = host.liveAllocations;
  const a = big.toManaged(host);
  assert.equal(host.allocationSize(a), 64 + 2 * 8 * 30);
  release(host, a);
  assert.equal(host.liveAllocations, withBig);
  assert.equal(trimExportBlocks(host), 16);
  assert.equal(host.liveAllocations, withBig - 16);
});

test("one Tensor exported into two hosts and as both struct kinds, alternately", () => {
  const h1 = createTestHost();
  const h2 = createTestHost();
  const t = wasmTensor(h1, { dtype: "float64", shape: [2, 3] }, 48);
  // Writable: a legacy struct can not say READ_ONLY, so a READ_ONLY tensor is never exported as one.
  const view = Tensor.wasmView(h1, { data: t.data, dtype: "float64", shape: [2, 3] });
  for (let round = 0; round < 3; round++) {
    const a = view.toManaged(h1);
    const l = view.toManaged(h1, { versioned: false });
    const c = view.toManaged(h2); // another memory: a copy
    const da = readManagedTensorVersioned(h1, a);
    const dl = readManagedTensor(h1, l);
    const dc = readManagedTensorVersioned(h2, c);
    assert.deepEqual([da.data, dl.data, [...dl.shape], [...dl.strides!]], [t.data, t.data, [2, 3], [3, 1]]);
    assert.equal(da.flags, 0);
    assert.equal(dc.flags, DLPackFlag.IS_COPIED);
    assert.deepEqual([...dc.shape], [2, 3]);
    h1.callVoidPointer(da.deleter, a);
    h1.callVoidPointer(dl.deleter, l);
    h2.callVoidPointer(dc.deleter, c);
  }
  assert.equal(trimExportBlocks(h1), 2, "a versioned and a legacy block");
  assert.equal(trimExportBlocks(h2), 0, "a copy's struct is freed");
  assert.equal(h2.liveAllocations, 0);
});
