/** Shared helpers for the node:test suites (not a test file itself). */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { WebDLPackError, type ErrorCodeName } from "../../js/src/errors.js";

/** The repository root: the first ancestor of this file holding wasm/include/webdlpack/dlpack.h. */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, "wasm", "include", "webdlpack", "dlpack.h"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error("repository root not found");
    dir = parent;
  }
}

/**
 * Absolute path of a build output of wasm/wasm.mk (`relPath` from the repository
 * root, e.g. "wasm/build/libwebdlpack.so"), made with `make` first when missing.
 */
export function wasmBuildOutput(relPath: string): string {
  const root = repoRoot();
  const file = join(root, relPath);
  if (!existsSync(file)) {
    execFileSync("make", ["--no-print-directory", "-f", "wasm/wasm.mk", relPath], { cwd: root, stdio: "pipe" });
  }
  return file;
}

/** Assert that `fn` throws a WebDLPackError with `code` (and `field`, if given); returns it. */
export function expectError(fn: () => unknown, code: ErrorCodeName, field?: string): WebDLPackError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof WebDLPackError, `expected WebDLPackError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, `wrong code: ${caught.message}`);
  if (field !== undefined) assert.equal(caught.field, field, `wrong field: ${caught.message}`);
  return caught;
}

/**
 * A predicate for `assert.throws` / `assert.rejects`: the error is a
 * WebDLPackError with `code` and, if given, a message matching `text`.
 */
export function isCode(code: ErrorCodeName, text?: RegExp): (err: unknown) => boolean {
  return (err: unknown): boolean => {
    assert.ok(err instanceof WebDLPackError, `expected WebDLPackError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    if (text) assert.match(err.message, text);
    return true;
  };
}

import {
  writeManagedTensorVersioned,
  writeManagedTensor,
  type WasmHost,
  type ManagedInput,
} from "../../js/src/dlpack/index.js";

/** A managed struct made the way a C producer would, with a deleter that counts its calls and frees everything. */
export interface Produced {
  /** Address of the managed struct. */
  readonly address: number;
  /** Address of the data block. */
  readonly data: number;
  /** Table index of the deleter. */
  readonly deleterIndex: number;
  /** How many times the deleter ran. */
  calls(): number;
}

/**
 * Allocate `nbytes` of data filled with `fill(i)` per byte, and a managed
 * struct over it (`input` minus data/deleter), whose deleter frees both.
 */
export function produce(
  host: WasmHost,
  input: Omit<ManagedInput, "data" | "deleter">,
  nbytes: number,
  options: { versioned?: boolean; dataOffset?: number; fill?: (i: number) => number } = {},
): Produced {
  const block = host.malloc(Math.max(nbytes, 1));
  assert.notEqual(block, 0, "malloc for test data failed");
  const fill = options.fill ?? ((i: number) => (i * 7 + 3) & 0xff);
  const bytes = new Uint8Array(host.buffer, block, nbytes);
  for (let i = 0; i < nbytes; i++) bytes[i] = fill(i);
  let calls = 0;
  let address = 0;
  const deleterIndex = host.addFunction((self) => {
    calls++;
    assert.equal(self, address, "deleter called with the wrong address");
    host.free(block);
    host.free(self);
  });
  const write = options.versioned === false ? writeManagedTensor : writeManagedTensorVersioned;
  address = write(host, { ...input, data: block + (options.dataOffset ?? 0), deleter: deleterIndex });
  return { address, data: block, deleterIndex, calls: () => calls };
}
