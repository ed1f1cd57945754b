/**
 * How the codec and the Tensor reach one wasm instance: its memory, its
 * allocator and its function table. Everything in webdlpack that touches wasm
 * memory goes through this interface, so the same code works over an
 * Emscripten module, Pyodide's module, or the in-JS test host.
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";
import { moduleAllocator, type AllocatorSource } from "./module-allocator.js";

/** A wasm instance as the codec sees it. Addresses are unsigned 32-bit numbers. */
export interface WasmHost {
  /**
   * The current memory buffer. Re-read it after every call that may grow
   * memory (`malloc`, any call into wasm): growth detaches the old buffer.
   */
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  /** `void *malloc(size_t)`: returns an address aligned to at least 8, or 0 on failure. */
  malloc(nbytes: number): number;
  /** `void free(void *)`: 0 is a no-op. */
  free(address: number): void;
  /** Make a wasm-callable `void f(void*)` from a JS function; returns its table index. */
  addFunction(fn: (arg: number) => void): number;
  /** Release a table index made by {@link WasmHost.addFunction}. */
  removeFunction(index: number): void;
  /** Call the table entry `index` as `void f(void*)` with `arg`. */
  callVoidPointer(index: number, arg: number): void;
}

/** A member of {@link WasmHost}. */
export type WasmHostMember = keyof WasmHost;

/** Every member of {@link WasmHost}. */
export const WASM_HOST_MEMBERS: readonly WasmHostMember[] = Object.freeze([
  "buffer",
  "malloc",
  "free",
  "addFunction",
  "removeFunction",
  "callVoidPointer",
] as const);

/** True if `host[member]` is of the kind {@link WasmHost} says. */
function hasMember(host: Record<string, unknown>, member: WasmHostMember): boolean {
  const v = host[member];
  return member === "buffer"
    ? v instanceof ArrayBuffer || (typeof SharedArrayBuffer !== "undefined" && v instanceof SharedArrayBuffer)
    : typeof v === "function";
}

/** Hosts found complete (every member) once: later checks of them cost one lookup (the export/decode paths check per call). */
const completeHosts = new WeakSet<object>();

/**
 * Throw INVALID_ARGUMENT naming `field` unless `host` is an object whose
 * `members` are there: `buffer` an ArrayBuffer or SharedArrayBuffer, the
 * others functions. Callers list the members they use (default: all); the
 * error's value says which member is missing or of the wrong kind.
 */
export function checkWasmHost(
  host: unknown,
  field = "host",
  members: readonly WasmHostMember[] = WASM_HOST_MEMBERS,
): asserts host is WasmHost {
  if (typeof host === "object" && host !== null && completeHosts.has(host)) return;
  const expected = (): string =>
    `a WasmHost (an object with ${members.join(", ")}; e.g. emscriptenHost(module), or createTestHost() from webdlpack/testing)`;
  if (host === null || typeof host !== "object") {
    throw new WebDLPackError("INVALID_ARGUMENT", "not a WasmHost", {
      field,
      value: describeValue(host),
      expected: expected(),
    });
  }
  const h = host as Record<string, unknown>;
  for (const member of members) {
    if (!hasMember(h, member)) {
      const v = String(describeValue(h[member]));
      throw new WebDLPackError("INVALID_ARGUMENT", `not a WasmHost (its ${member} is ${v})`, {
        field,
        value: `an object whose ${member} is ${v}`,
        expected: expected(),
      });
    }
  }
  if (WASM_HOST_MEMBERS.every((m) => hasMember(h, m))) completeHosts.add(host);
}

/**
 * The members of an Emscripten module (or `pyodide._module`) that {@link emscriptenHost} uses.
 * Its allocator is `_malloc`/`_free`, else the pair its dynamic linker resolves (module-allocator.ts).
 */
export interface EmscriptenModuleLike extends AllocatorSource {
  /** The heap as bytes; Emscripten replaces it after memory growth. */
  HEAPU8: Uint8Array;
  /** `addFunction(fn, sig)`; needs `-sALLOW_TABLE_GROWTH`. */
  addFunction(fn: (...args: number[]) => unknown, signature: string): number;
  /** Release a table index made by `addFunction`. */
  removeFunction(index: number): void;
  /** The indirect function table (exported as `wasmTable` by Pyodide and most builds). */
  wasmTable?: WebAssembly.Table;
  /** Alternative table accessor some builds export instead of `wasmTable`. */
  getWasmTableEntry?(index: number): (...args: number[]) => unknown;
}

/**
 * Table entries for short-lived `void f(i32)` JS functions, reused.
 *
 * Emscripten's `addFunction` compiles a small wasm module for every JS
 * function it puts in the table (about 10 µs), and a producer that makes one
 * deleter per struct (a test producer, the conformance probe) would pay that
 * per struct (`Tensor.toManaged` shares one entry per host). Instead, each pooled entry is
 * a trampoline made once that calls whatever JS function its slot holds now;
 * `add` fills a free slot, `remove` empties it and returns the index to the
 * pool. Calling an emptied entry does nothing (as calling a removed
 * Emscripten entry ran the old function, whose own guard made it a no-op).
 */
class TrampolinePool {
  private readonly slots: (((arg: number) => void) | null)[] = [];
  private readonly indexOf: number[] = [];
  private readonly free: number[] = [];
  private readonly slotOfIndex = new Map<number, number>();

  constructor(private readonly module: EmscriptenModuleLike) {}

  add(fn: (arg: number) => void): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      slot = this.slots.length;
      const s = slot;
      this.slots.push(null);
      const index =
        this.module.addFunction((arg: number) => {
          const f = this.slots[s];
          if (f) f(arg >>> 0);
        }, "vi") >>> 0;
      this.indexOf.push(index);
      this.slotOfIndex.set(index, s);
    }
    this.slots[slot] = fn;
    return this.indexOf[slot]!;
  }

  /** The JS function a pooled entry `index` calls now (undefined: not pooled, or emptied). */
  current(index: number): ((arg: number) => void) | undefined {
    const slot = this.slotOfIndex.get(index);
    return slot === undefined ? undefined : (this.slots[slot] ?? undefined);
  }

  /** True when `index` is a pooled entry whose slot is empty (removed). */
  isEmptied(index: number): boolean {
    const slot = this.slotOfIndex.get(index >>> 0);
    return slot !== undefined && this.slots[slot] === null;
  }

  remove(index: number): void {
    const slot = this.slotOfIndex.get(index >>> 0);
    if (slot === undefined || this.slots[slot] === null) {
      throw new WebDLPackError("INVALID_POINTER", "no live function at this table index", {
        field: "function index",
        value: index >>> 0,
        expected: "an index made by addFunction and not removed yet",
      });
    }
    this.slots[slot] = null;
    this.free.push(slot);
  }
}

const hostsOfModules = new WeakMap<object, WasmHost>();

/**
 * The {@link WasmHost} over an Emscripten module (for example `pyodide._module`):
 * one per module, so what webdlpack keeps per host (the deleter entry its
 * exports share) is made once per module however often this is called.
 * The buffer is re-read from `HEAPU8` on every access, so it follows growth.
 * Table entries are made with signature `"vi"` (`void f(i32)`) and reused
 * after `removeFunction`.
 */
export function emscriptenHost(module: EmscriptenModuleLike): WasmHost {
  let host = hostsOfModules.get(module);
  if (host === undefined) {
    host = makeEmscriptenHost(module);
    hostsOfModules.set(module, host);
  }
  return host;
}

function makeEmscriptenHost(module: EmscriptenModuleLike): WasmHost {
  const { malloc, free } = moduleAllocator(module);
  const trampolines = new TrampolinePool(module);
  const entry = (index: number): ((...args: number[]) => unknown) => {
    const fn = module.getWasmTableEntry ? module.getWasmTableEntry(index >>> 0) : module.wasmTable?.get(index >>> 0);
    if (typeof fn !== "function" || trampolines.isEmptied(index)) {
      throw new WebDLPackError("INVALID_POINTER", "no function in the wasm table at this index", {
        field: "function index",
        value: index >>> 0,
        expected: "an index made by addFunction",
      });
    }
    return fn as (...args: number[]) => unknown;
  };
  return {
    get buffer() {
      return module.HEAPU8.buffer;
    },
    malloc,
    free,
    addFunction: (fn) => trampolines.add(fn),
    removeFunction: (index) => trampolines.remove(index),
    callVoidPointer: (index, arg) => {
      // A pooled entry's trampoline would only call its slot's function: call that directly (no wasm round trip).
      const direct = trampolines.current(index >>> 0);
      if (direct !== undefined) direct(arg >>> 0);
      else entry(index)(arg >>> 0);
    },
  };
}
