/**
 * emscriptenHost's allocator is the libc malloc/free that Python's C code and the side modules use, in every
 * supported Pyodide (each version package.json pins: before 314 Pyodide exports no `_malloc`). Proved by
 * freeing on one side what the other allocated, and seeing the allocator hand the very block out again
 * (among the next blocks of that size: which free block dlmalloc picks first depends on its bins and on the heap's
 * layout, which need not repeat from run to run — Python's hash seed, for one, is random. With the next 8, Pyodide
 * 0.27.8 failed once in a fresh-clone CI run (make test-matrix kept no output then; now it does) and passed in the 7
 * runs after; a foreign allocator never hands the block out at all, so the next 64 prove the same).
 * The JS suite runs the oldest and the newest; `make test-matrix` runs every one (WEBDLPACK_EVERY_PYODIDE=1).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { pathToFileURL } from "node:url";
import { emscriptenHost, moduleAllocator, type EmscriptenModuleLike } from "../../js/src/dlpack/index.js";
import { repoRoot } from "./helpers.js";

interface Installed {
  install: string;
  version: string;
}
interface PyodideApi {
  version: string;
  _module: EmscriptenModuleLike;
  runPython(code: string): unknown;
}

const pinned = (
  (await import(pathToFileURL(join(repoRoot(), "scripts/matrix-versions.mjs")).href)) as {
    pyodideVersions(): Installed[];
  }
).pyodideVersions();
const versions = process.env.WEBDLPACK_EVERY_PYODIDE === "1" ? pinned : [pinned[0]!, pinned[pinned.length - 1]!];

/** How many blocks of a size each side takes, looking for the one the other side freed. */
const SEARCH = 64;

const LIBC = `
import ctypes
SEARCH = ${SEARCH}
_libc = ctypes.CDLL(None)
c_malloc = _libc.malloc
c_malloc.restype, c_malloc.argtypes = ctypes.c_size_t, [ctypes.c_size_t]
c_free = _libc.free
c_free.restype, c_free.argtypes = None, [ctypes.c_size_t]
def c_free_then_malloc(address, size):
    c_free(address)
    got = [c_malloc(size) for _ in range(SEARCH)]  # the block comes back among the next ones of its size
    for p in got:
        c_free(p)
    return address in got
`;

test("the Pyodide versions package.json pins span the supported range", () => {
  assert.deepEqual(
    pinned.map((v) =>
      v.version
        .split(".")
        .slice(0, v.version.startsWith("0.") ? 2 : 1)
        .join("."),
    ),
    ["0.27", "0.28", "0.29", "314", "315"],
  );
});

for (const { install, version } of versions) {
  test(`Pyodide ${version}: JS and C share one malloc/free`, { timeout: 120_000 }, async () => {
    const { loadPyodide } = (await import(install)) as {
      loadPyodide(o: { indexURL: string }): Promise<PyodideApi>;
    };
    const indexURL = join(repoRoot(), "node_modules", install) + "/";
    // Each Pyodide's loader reuses a module factory an earlier one left on globalThis: start clean.
    delete (globalThis as { _createPyodideModule?: unknown })._createPyodideModule;
    const pyodide = await loadPyodide({ indexURL });
    const module = pyodide._module;
    const major = Number(version.split(".")[0]);
    assert.equal(typeof (module as { _malloc?: unknown })._malloc === "function", major >= 314, "_malloc exported");
    assert.equal(moduleAllocator(module).source, major >= 314 ? "exports" : "symbols");
    const host = emscriptenHost(module);
    pyodide.runPython(LIBC);
    for (const size of [1000, 4000, 70_000]) {
      // JS allocates, C frees: the block is back in C's allocator, which hands it out again.
      const a = host.malloc(size);
      assert.ok(a > 0 && a % 8 === 0, `aligned address ${a}`);
      new Uint8Array(host.buffer, a, size).fill(0xab); // the heap is writable there
      assert.equal(
        pyodide.runPython(`c_free_then_malloc(${a}, ${size})`),
        true,
        `C reuses the block JS allocated (${size} B)`,
      );
      // C allocates, JS frees: the block comes back among JS's next few of that size.
      const b = pyodide.runPython(`c_malloc(${size})`) as number;
      host.free(b);
      const again = Array.from({ length: SEARCH }, () => host.malloc(size));
      assert.ok(again.includes(b), `JS reuses the block C allocated and JS freed (${size} B)`);
      for (const p of again) host.free(p);
    }
    // Many blocks across the boundary both ways, then the heap still works (a foreign free would trap).
    const blocks = Array.from({ length: 200 }, (_, i) => host.malloc(16 + ((i * 37) % 512)));
    pyodide.runPython(`for p in [${blocks.join(",")}]: c_free(p)`);
    const fromC = pyodide.runPython("[c_malloc(24 + i) for i in range(200)]") as { toJs(): number[]; destroy(): void };
    const cBlocks = fromC.toJs();
    fromC.destroy();
    for (const p of cBlocks) host.free(p);
    const last = host.malloc(4096);
    assert.ok(last > 0);
    host.free(last);
  });
}
