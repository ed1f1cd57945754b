// webdlpack's own transfer paths, measured right after the raw anchors (primitives.js) at the same size:
//   ctx.readback (old algorithm)   what ctx.readback did before the transfer home: pooled staging by power-of-two
//                                  size, one copy + one mapAsync, a fresh array filled after the map resolved
//   ctx.readback (new)             ctx.readback now (a new ArrayBuffer per call)
//   ctx.readbackInto wasm memory   into a WebAssembly.Memory at an address (as Python's and C's readbacks do)
//   ctx.readbackInto reused TypedArray
//   ctx.upload + wait              ctx.upload (path chosen by size) + onSubmittedWorkDone
//   ctx.copyBuffer + wait          GPU → GPU through the context
// Plain ESM: Node (node.mjs) and Chromium (transfers.html) load it as is.
import { budgetFor, checkSame, pattern, row, sample } from "./measure.js";

const STAGING_MIN = 256;

/** The pre-transfer-home ctx.readback, kept here verbatim in behaviour as the "old" side of the comparison. */
async function oldReadback(device, pool, source, length) {
  const size = Math.max(STAGING_MIN, 2 ** Math.ceil(Math.log2(Math.max(length, 1))));
  const staging = pool.get(size)?.pop() ?? device.createBuffer({ size, usage: 1 | 8 });
  const enc = device.createCommandEncoder();
  enc.copyBufferToBuffer(source, 0, staging, 0, length);
  device.queue.submit([enc.finish()]);
  await staging.mapAsync(1, 0, length);
  const out = new Uint8Array(length);
  out.set(new Uint8Array(staging.getMappedRange(0, length), 0, length));
  staging.unmap();
  const stack = pool.get(size) ?? [];
  if (stack.length < 4 && size <= 64 * 2 ** 20) stack.push(staging);
  else staging.destroy();
  pool.set(size, stack);
  return out.buffer;
}

/** A WebAssembly.Memory with room for `n` bytes at a 64-byte aligned address, every page touched. */
function wasmMemory(n) {
  const pages = Math.ceil((n + 128) / 65536);
  const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
  new Uint8Array(memory.buffer).fill(3);
  return { memory, address: 64, byteLength: n };
}

/** The webdlpack rows at `n` bytes; `webdlpack` is the package, its context set up on `device`. */
export async function webdlpackRows(webdlpack, device, n) {
  const ctx = webdlpack.getContext();
  const b = budgetFor(n);
  const expected = pattern(new Uint8Array(n), 13);
  const src = await ctx.allocWebGPUChecked(n, { label: "bench source" });
  const dst = await ctx.allocWebGPUChecked(n, { label: "bench destination" });
  device.queue.writeBuffer(ctx.gpuPointerToBuffer(src), 0, expected);
  await device.queue.onSubmittedWorkDone();
  const rows = [];
  const meta = { group: "webdlpack", direction: "readback" };

  const pool = new Map();
  let got;
  rows.push(
    row(
      "ctx.readback (old algorithm)",
      n,
      await sample(async () => {
        got = await oldReadback(device, pool, ctx.gpuPointerToBuffer(src), n);
      }, b),
      meta,
    ),
  );
  checkSame(new Uint8Array(got), expected, "old readback");
  for (const stack of pool.values()) for (const s of stack) s.destroy();

  rows.push(
    row(
      "ctx.readback (new)",
      n,
      await sample(async () => {
        got = await ctx.readback(src);
      }, b),
      meta,
    ),
  );
  checkSame(new Uint8Array(got), expected, "ctx.readback");

  const heap = wasmMemory(n);
  rows.push(
    row(
      "ctx.readbackInto wasm memory",
      n,
      await sample(async () => {
        await ctx.readbackInto(src, heap);
      }, b),
      meta,
    ),
  );
  checkSame(new Uint8Array(heap.memory.buffer, heap.address, n), expected, "readbackInto wasm memory");

  const reused = new Uint8Array(n).fill(5);
  rows.push(
    row(
      "ctx.readbackInto reused TypedArray",
      n,
      await sample(async () => {
        await ctx.readbackInto(src, reused);
      }, b),
      meta,
    ),
  );
  checkSame(reused, expected, "readbackInto TypedArray");

  if (typeof ctx.upload === "function") {
    const host = pattern(new Uint8Array(n), 17);
    rows.push(
      row(
        "ctx.upload + wait",
        n,
        await sample(async () => {
          ctx.upload(dst, host);
          await device.queue.onSubmittedWorkDone();
        }, b),
        {
          group: "webdlpack",
          direction: "upload",
          path: ctx.transferStats(0).lastUploadPath,
          staging: ctx.transferStats(0).write,
        },
      ),
    );
    checkSame(new Uint8Array(await ctx.readback(dst)), host, "ctx.upload");
  }
  if (typeof ctx.copyBuffer === "function") {
    rows.push(
      row(
        "ctx.copyBuffer + wait",
        n,
        await sample(async () => {
          ctx.copyBuffer(src, dst, { byteLength: n });
          await device.queue.onSubmittedWorkDone();
        }, b),
        { group: "webdlpack", direction: "gpu" },
      ),
    );
    checkSame(new Uint8Array(await ctx.readback(dst)), expected, "ctx.copyBuffer");
  }
  ctx.freeWebGPU(src);
  ctx.freeWebGPU(dst);
  return rows;
}
