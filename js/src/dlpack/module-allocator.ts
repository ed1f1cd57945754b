/**
 * The allocator of an Emscripten module: the libc `malloc`/`free` pair its
 * C code and its side modules use, so memory JS allocates can be freed by C
 * (and the other way round).
 *
 * Most builds export the pair as `module._malloc` / `module._free`. Pyodide
 * before 314 exports only `_free` (the main module does not list `malloc` in
 * its JS exports); a dynamically linked main module still has both in its
 * symbol table, which is what its side modules import them from:
 * `module.resolveGlobalSymbol("malloc")` is the very function a side module's
 * `malloc` calls. Checked in Pyodide 0.27.8, 0.28.3, 0.29.5, 314.0.7 and
 * 315.0.0a2: the resolved `free` is `module._free`, and the resolved `malloc`
 * is also `_emscripten_builtin_malloc` (tests/js/pyodide-allocator.test.ts
 * frees from either side what the other allocated).
 */
import { describeValue } from "../describe-value.js";
import { WebDLPackError } from "../errors.js";

/** `void *malloc(size_t)` / `void free(void *)` of one wasm instance. */
export interface ModuleAllocator {
  /** Returns an unsigned address, 0 on failure. */
  malloc(nbytes: number): number;
  /** 0 is a no-op. */
  free(address: number): void;
  /** Where the pair was found: the module's exports, or the dynamic linker's symbol table. */
  readonly source: "exports" | "symbols";
}

/** What {@link moduleAllocator} reads of an Emscripten module. */
export interface AllocatorSource {
  /** The exported `malloc` (missing in Pyodide before 314). */
  _malloc?: (nbytes: number) => number;
  /** The exported `free`. */
  _free?: (address: number) => void;
  /**
   * Emscripten's dynamic linker lookup (MAIN_MODULE builds such as Pyodide): `{sym, name}` in
   * current Emscripten, the function itself in older ones.
   */
  resolveGlobalSymbol?: (name: string) => unknown;
}

type Fn = (...args: number[]) => number | undefined;

/** The function `resolveGlobalSymbol(name)` found, or undefined. */
function resolved(module: AllocatorSource, name: string): Fn | undefined {
  let found: unknown;
  try {
    found = module.resolveGlobalSymbol?.(name);
  } catch {
    return undefined;
  }
  const sym = typeof found === "object" && found !== null ? (found as { sym?: unknown }).sym : found;
  return typeof sym === "function" ? (sym as Fn) : undefined;
}

const allocators = new WeakMap<object, ModuleAllocator>();

/**
 * The module's `malloc`/`free` pair (one object per module). Throws UNSUPPORTED naming
 * `field` when the module has neither the exported pair nor a symbol table holding it.
 */
export function moduleAllocator(module: AllocatorSource, field = "module._malloc"): ModuleAllocator {
  const known = allocators.get(module);
  if (known !== undefined) return known;
  let allocator: ModuleAllocator;
  const exportedMalloc = module._malloc;
  const exportedFree = module._free;
  if (typeof exportedMalloc === "function" && typeof exportedFree === "function") {
    allocator = {
      malloc: (nbytes) => exportedMalloc(nbytes) >>> 0,
      free: (address) => exportedFree(address >>> 0),
      source: "exports",
    };
  } else {
    const malloc = resolved(module, "malloc");
    const free = resolved(module, "free");
    if (malloc === undefined || free === undefined) {
      throw new WebDLPackError("UNSUPPORTED", "this wasm module exposes no malloc/free pair", {
        field,
        value: describeValue(exportedMalloc),
        expected:
          "an Emscripten module exporting _malloc and _free, or a dynamically linked one whose " +
          "resolveGlobalSymbol finds malloc and free (Pyodide 0.27 and later)",
      });
    }
    allocator = {
      malloc: (nbytes) => (malloc(nbytes) ?? 0) >>> 0,
      free: (address) => void free(address >>> 0),
      source: "symbols",
    };
  }
  allocators.set(module, allocator);
  return allocator;
}
