/**
 * A {@link WasmHost} made entirely in JS, for tests (no compiled wasm needed):
 * a real, growable `WebAssembly.Memory`, a first-fit allocator whose
 * bookkeeping lives in JS (memory holds only user bytes), and a JS array as
 * the function table. It is strict: freeing an address it did not hand out,
 * or calling an unknown function index, throws — so tests catch double frees.
 */
import { requireObject } from "../arguments.js";
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import type { WasmHost } from "../dlpack/index.js";

/** Bytes in one wasm page. */
export const WASM_PAGE_SIZE = 65536;

/** Options of {@link createTestHost}. */
export interface TestHostOptions {
  /**
   * First address the allocator hands out (default 1024, so low addresses,
   * and 0 in particular, are never valid allocations). Set it to 0x80000000
   * with ≥ 32769 initial pages to test addresses above 2 GiB.
   */
  heapBase?: number;
  /** Alignment of every allocation, a power of two ≥ 8 (default 16, as emscripten's malloc). */
  alignment?: number;
  /** A shared memory (its buffer a SharedArrayBuffer), as a threaded wasm build has; default false. */
  shared?: boolean;
}

/** A test host: a {@link WasmHost} plus what tests want to look at. */
export interface TestHost extends WasmHost {
  /** The underlying memory (grow it to test detached views). */
  readonly memory: WebAssembly.Memory;
  /** Number of blocks allocated and not yet freed. */
  readonly liveAllocations: number;
  /** Bytes in those blocks (as requested, before rounding). */
  readonly liveBytes: number;
  /** Number of function-table entries added and not yet removed. */
  readonly liveFunctions: number;
  /** Size (as requested) of the live block at `address`, or undefined. */
  allocationSize(address: number): number | undefined;
  /** Make every later `malloc` return 0 (true) or work again (false). */
  failMalloc(fail: boolean): void;
}

interface Block {
  start: number;
  size: number;
}

/** Most pages a 32-bit wasm memory can have (4 GiB). */
const MAX_WASM_PAGES = 65536;

/** INVALID_ARGUMENT naming `field` unless `pages` is an integer `min`..65536. */
function checkPages(pages: unknown, field: string, min: number): asserts pages is number {
  if (typeof pages !== "number" || !Number.isInteger(pages) || pages < min || pages > MAX_WASM_PAGES) {
    throw new WebDLPackError("INVALID_ARGUMENT", "bad wasm page count", {
      field,
      value: pages,
      expected: `an integer ${min}..${MAX_WASM_PAGES} (64 KiB pages)`,
    });
  }
}

/**
 * Create a test host over `new WebAssembly.Memory({initial: initialPages,
 * maximum: maxPages})`. `malloc` grows the memory when no free block fits and
 * returns 0 once `maxPages` is reached. Throws INVALID_ARGUMENT for a page
 * count that is not an integer 0..65536 (`maxPages` at least `initialPages`)
 * or a bad option, OUT_OF_MEMORY if the runtime can not reserve the memory.
 */
export function createTestHost(initialPages = 1, maxPages = 256, options: TestHostOptions = {}): TestHost {
  checkPages(initialPages, "initialPages", 0);
  checkPages(maxPages, "maxPages", initialPages);
  requireObject(options, "options", "an object {heapBase?, alignment?, shared?}", "bad createTestHost options");
  const alignment = options.alignment ?? 16;
  const heapBase = (options.heapBase ?? 1024) >>> 0;
  if (!Number.isInteger(alignment) || alignment < 8 || (alignment & (alignment - 1)) !== 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "alignment must be a power of two >= 8", {
      field: "options.alignment",
      value: alignment,
      expected: "a power of two >= 8",
    });
  }
  if (heapBase === 0 || heapBase % alignment !== 0) {
    throw new WebDLPackError("INVALID_ARGUMENT", "heapBase must be non-zero and aligned", {
      field: "options.heapBase",
      value: heapBase,
      expected: `a non-zero multiple of ${alignment}`,
    });
  }
  let memory: WebAssembly.Memory;
  try {
    memory = new WebAssembly.Memory({ initial: initialPages, maximum: maxPages, shared: options.shared === true });
  } catch (err) {
    throw new WebDLPackError(
      "OUT_OF_MEMORY",
      `could not reserve a wasm memory of ${initialPages} pages (maximum ${maxPages})`,
      {
        field: "initialPages",
        value: initialPages,
        expected: "a memory size this runtime can allocate",
        cause: err,
      },
    );
  }
  // Free blocks sorted by address; live blocks by address → requested size.
  const free: Block[] = [];
  const live = new Map<number, { size: number; rounded: number }>();
  let heapEnd = heapBase; // end of the address range the allocator manages so far
  let liveBytes = 0;
  let failing = false;
  const table: (((arg: number) => void) | undefined)[] = [undefined]; // index 0 is the null function
  let liveFunctions = 0;

  const roundUp = (n: number): number => Math.ceil(Math.max(n, 1) / alignment) * alignment;

  const insertFree = (block: Block): void => {
    let i = 0;
    while (i < free.length && free[i]!.start < block.start) i++;
    free.splice(i, 0, block);
    // Merge with the next, then the previous block.
    const next = free[i + 1];
    if (next !== undefined && block.start + block.size === next.start) {
      block.size += next.size;
      free.splice(i + 1, 1);
    }
    const prev = free[i - 1];
    if (prev !== undefined && prev.start + prev.size === block.start) {
      prev.size += block.size;
      free.splice(i, 1);
    }
  };

  const grow = (needed: number): boolean => {
    // Extend the managed range by `needed` bytes, growing memory if required.
    const newEnd = heapEnd + needed;
    const have = memory.buffer.byteLength;
    if (newEnd > have) {
      const pages = Math.ceil((newEnd - have) / WASM_PAGE_SIZE);
      try {
        memory.grow(pages);
      } catch {
        return false;
      }
    }
    insertFree({ start: heapEnd, size: needed });
    heapEnd = newEnd;
    return true;
  };

  const host: TestHost = {
    get buffer() {
      return memory.buffer;
    },
    get memory() {
      return memory;
    },
    get liveAllocations() {
      return live.size;
    },
    get liveBytes() {
      return liveBytes;
    },
    get liveFunctions() {
      return liveFunctions;
    },
    allocationSize(address: number) {
      return live.get(address >>> 0)?.size;
    },
    failMalloc(fail: boolean) {
      failing = fail;
    },
    malloc(nbytes: number): number {
      if (failing || !Number.isSafeInteger(nbytes) || nbytes < 0 || nbytes > 0xffffffff) return 0;
      const rounded = roundUp(nbytes);
      let index = free.findIndex((b) => b.size >= rounded);
      if (index < 0) {
        const last = free[free.length - 1];
        const tail = last !== undefined && last.start + last.size === heapEnd ? last.size : 0;
        if (heapEnd + rounded - tail > 0x100000000 || !grow(rounded - tail)) return 0;
        index = free.findIndex((b) => b.size >= rounded);
      }
      const block = free[index]!;
      const address = block.start;
      if (block.size === rounded) free.splice(index, 1);
      else {
        block.start += rounded;
        block.size -= rounded;
      }
      live.set(address, { size: nbytes, rounded });
      liveBytes += nbytes;
      return address >>> 0;
    },
    free(address: number): void {
      const addr = address >>> 0;
      if (addr === 0) return;
      const info = live.get(addr);
      if (info === undefined) {
        throw new WebDLPackError("DOUBLE_FREE", "free() of an address that is not a live allocation", {
          field: "address",
          value: addr,
          expected: "an address returned by malloc and not yet freed",
        });
      }
      live.delete(addr);
      liveBytes -= info.size;
      insertFree({ start: addr, size: info.rounded });
    },
    addFunction(fn: (arg: number) => void): number {
      if (typeof fn !== "function") {
        throw new WebDLPackError("INVALID_ARGUMENT", "addFunction needs a function", {
          field: "fn",
          value: describeValue(fn),
          expected: "a function (arg) => void",
        });
      }
      table.push(fn); // indices are never reused, so a stale index fails loudly
      liveFunctions++;
      return table.length - 1;
    },
    removeFunction(index: number): void {
      const i = index >>> 0;
      if (table[i] === undefined) {
        throw new WebDLPackError("INVALID_POINTER", "removeFunction of an index that holds no function", {
          field: "index",
          value: i,
          expected: "an index addFunction returned and not yet removed",
        });
      }
      table[i] = undefined;
      liveFunctions--;
    },
    callVoidPointer(index: number, arg: number): void {
      const i = index >>> 0;
      const fn = table[i];
      if (fn === undefined) {
        throw new WebDLPackError("INVALID_POINTER", "call of a function index that holds no function", {
          field: "index",
          value: i,
          expected: "an index made by addFunction and not removed",
        });
      }
      fn(arg >>> 0);
    },
  };
  // Make the initial pages past heapBase available without a grow.
  if (memory.buffer.byteLength > heapBase) {
    insertFree({ start: heapBase, size: memory.buffer.byteLength - heapBase });
    heapEnd = memory.buffer.byteLength;
  } else if (heapBase > memory.buffer.byteLength) {
    // Heap starts above current memory: grow up to it first (addresses below stay unused).
    heapEnd = heapBase;
  }
  return host;
}
