/**
 * Moving bytes between C's memory (the wasm heap the side module shares with
 * Pyodide) and GPU pointers C allocated or was handed: the context's one
 * upload and readback (ctx.upload / ctx.readbackInto → context/transfers/),
 * with C's heap as the host side — no intermediate array, and the heap view
 * re-derived at each use, so memory growth during a readback is harmless.
 */
import type { WebDLPackContext } from "../../context/index.js";
import { WebDLPackError } from "../../errors.js";
import type { HeapSource } from "./memory.js";

/** GPU ⇄ C memory transfers of a loaded library. */
export interface ClibTransfers {
  /** Copy `nbytes` of C memory at `address` into GPU pointer `ptr` at `byteOffset` (a multiple of 4), now. */
  upload(ptr: number, address: number, nbytes: number, byteOffset?: number): void;
  /** Read `nbytes` of GPU pointer `ptr` at `byteOffset` straight into C memory at `address`, after all submitted work. */
  readback(ptr: number, address: number, nbytes: number, byteOffset?: number): Promise<void>;
}

/** The heap as `{memory, address, byteLength}` for the context's transfers. */
function heapRange(
  heap: HeapSource,
  address: number,
  nbytes: number,
): { memory: { readonly buffer: ArrayBufferLike }; address: number; byteLength: number } {
  if (typeof nbytes !== "number" || !Number.isSafeInteger(nbytes) || nbytes < 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad byte count", {
      field: "nbytes",
      value: nbytes,
      expected: "a safe integer >= 0",
    });
  }
  return {
    memory: {
      get buffer() {
        return heap.HEAPU8.buffer;
      },
    },
    address: address >>> 0,
    byteLength: nbytes,
  };
}

/** The transfers of a library whose heap is `heap`, through the context `context()` returns. */
export function clibTransfers(heap: HeapSource, context: () => WebDLPackContext): ClibTransfers {
  return {
    upload(ptr, address, nbytes, byteOffset = 0) {
      context().upload(ptr >>> 0, heapRange(heap, address, nbytes), { byteOffset });
    },
    readback(ptr, address, nbytes, byteOffset = 0) {
      return context().readbackInto(ptr >>> 0, heapRange(heap, address, nbytes), { byteOffset, byteLength: nbytes });
    },
  };
}
